#![doc = include_str!("../../../docs/reference/trace.md")]

use std::borrow::Cow;

use elect_core::{Command, Epoch, GroupId, NodeId, Notice, Property, State};
use serde::de::{Error as _, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize};

use crate::time::Time;

/// One trace line: what the simulator writes for every event of a traced run, what the model checker writes for a
/// counterexample's steps, and what the pictures read back.
///
/// A writer borrows what it records (`'a`); the payloads a process gives (a message `M`, a timer `T`, a view `V`)
/// are its own types, written as serde writes them. A reader that does not look at the payloads reads them as
/// [`IgnoredAny`], the defaults; it skips records of a kind it does not know ([`Record::Other`]), and takes the
/// fields a writer may leave out (a run's size, seed, delay and initiators, a status's epoch and group, a timer's
/// text, a delivery's message, an end's counts) as absent or zero.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "kebab-case")]
pub enum Record<'a, M = IgnoredAny, T = IgnoredAny, V = IgnoredAny> {
    /// The run: always the first line.
    Run {
        /// The algorithm's canonical name.
        algorithm: Cow<'a, str>,
        /// The topology, as `--topology` names it.
        topology: Cow<'a, str>,
        /// `n`.
        #[serde(default)]
        nodes: usize,
        /// The root seed.
        #[serde(default)]
        seed: u64,
        /// The delay model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delay: Option<Cow<'a, str>>,
        /// The id at each position.
        ids: Cow<'a, [NodeId]>,
        /// The processes told to initiate at time 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        initiators: Option<Vec<NodeId>>,
        /// Whether `t` counts the steps of a path the model checker found (one unit a step) rather than time.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        steps: bool,
    },
    /// A process crashed.
    Crash {
        /// When.
        t: Time,
        /// Which.
        node: NodeId,
    },
    /// A process restarted from what it persisted.
    Recover {
        /// When.
        t: Time,
        /// Which.
        node: NodeId,
    },
    /// A link went down or came up.
    Link {
        /// When.
        t: Time,
        /// One end (the sender, one way).
        from: NodeId,
        /// The other end.
        to: NodeId,
        /// Whether both directions changed.
        both_ways: bool,
        /// Whether it came up.
        up: bool,
    },
    /// A partition started or healed.
    Partition {
        /// When.
        t: Time,
        /// The partition, as `--partition` writes it.
        partition: Cow<'a, str>,
        /// Whether it healed.
        healed: bool,
    },
    /// Something the driver says about the run.
    Note {
        /// When.
        t: Time,
        /// What.
        note: Cow<'a, str>,
    },
    /// A process started.
    Start {
        /// When.
        t: Time,
        /// Which.
        node: NodeId,
    },
    /// A command reached a process.
    Command {
        /// When.
        t: Time,
        /// Which.
        node: NodeId,
        /// The command.
        cmd: Command,
    },
    /// A process sent a message.
    Send {
        /// When.
        t: Time,
        /// The sender.
        node: NodeId,
        /// The receiver.
        to: NodeId,
        /// The message's number in the run.
        id: u64,
        /// When it is due.
        at: Time,
        /// Its kind.
        kind: Cow<'a, str>,
        /// The message in the algorithm's words.
        text: Cow<'a, str>,
        /// The message.
        #[serde(default)]
        msg: M,
    },
    /// A message arrived.
    Deliver {
        /// When.
        t: Time,
        /// The receiver.
        node: NodeId,
        /// The sender.
        from: NodeId,
        /// The message's number in the run.
        id: u64,
        /// Its kind.
        kind: Cow<'a, str>,
        /// The message in the algorithm's words.
        text: Cow<'a, str>,
        /// The message, if the writer records it again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        msg: Option<M>,
    },
    /// A message was lost, or reached a crashed process.
    Drop {
        /// When.
        t: Time,
        /// The receiver.
        node: NodeId,
        /// The sender.
        from: NodeId,
        /// The message's number in the run.
        id: u64,
        /// Why (`down`, `loss`, `link-down`, `partition`, `out of range`).
        reason: Cow<'a, str>,
    },
    /// A timer fired.
    Timer {
        /// When.
        t: Time,
        /// Which process's.
        node: NodeId,
        /// The timer in the algorithm's words.
        #[serde(default)]
        text: Cow<'a, str>,
        /// The timer.
        #[serde(default)]
        timer: T,
    },
    /// A process set a timer (or set it again): it fires at `at` unless it is cancelled or set again first.
    Arm {
        /// When.
        t: Time,
        /// Which process's.
        node: NodeId,
        /// The timer in the algorithm's words.
        #[serde(default)]
        text: Cow<'a, str>,
        /// When it fires.
        at: Time,
    },
    /// A process cancelled a timer it had set.
    Disarm {
        /// When.
        t: Time,
        /// Which process's.
        node: NodeId,
        /// The timer in the algorithm's words.
        #[serde(default)]
        text: Cow<'a, str>,
    },
    /// The rule of its algorithm a process applied.
    Rule {
        /// When.
        t: Time,
        /// Which process.
        node: NodeId,
        /// The rule's name.
        rule: Cow<'a, str>,
    },
    /// A process's state, in its algorithm's words.
    View {
        /// When.
        t: Time,
        /// Which process.
        node: NodeId,
        /// Its view.
        #[serde(default)]
        view: V,
    },
    /// A process's status changed.
    Status {
        /// When.
        t: Time,
        /// Which process.
        node: NodeId,
        /// Its state.
        #[serde(deserialize_with = "state_by_name")]
        state: State,
        /// The leader it follows.
        leader: Option<NodeId>,
        /// Its epoch.
        #[serde(default)]
        epoch: Epoch,
        /// Its group, for algorithms that form groups.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<GroupId>,
    },
    /// A process told its environment something.
    Notice {
        /// When.
        t: Time,
        /// Which process.
        node: NodeId,
        /// What.
        #[serde(flatten)]
        notice: Notice,
    },
    /// A process's parent in its algorithm's tree changed.
    Parent {
        /// When.
        t: Time,
        /// Which process.
        node: NodeId,
        /// Its parent.
        parent: Option<NodeId>,
    },
    /// A property was violated.
    Violation {
        /// When.
        t: Time,
        /// Which.
        property: Property,
        /// At which process, if at one.
        node: Option<NodeId>,
        /// What went wrong.
        detail: Cow<'a, str>,
    },
    /// The run ended.
    End {
        /// When.
        t: Time,
        /// Events processed.
        #[serde(default)]
        events: u64,
        /// Messages sent.
        #[serde(default)]
        messages: u64,
        /// Whether the run became quiescent.
        #[serde(default)]
        terminated: bool,
    },
    /// A record of a kind this reader does not know (never written).
    #[serde(other)]
    Other,
}

/// A state by the name traces give it, refusing another with `unknown state 'NAME'`.
fn state_by_name<'de, D: Deserializer<'de>>(d: D) -> Result<State, D::Error> {
    let name = Cow::<str>::deserialize(d)?;
    [State::Down, State::Election, State::Reorganization, State::Normal]
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| D::Error::custom(format!("unknown state '{}'", crate::shorten(&name))))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Written<'a> = Record<'a, &'a str, &'a str, &'a str>;

    #[test]
    fn records_write_their_fields_in_order_and_read_back() {
        let ids = [NodeId(5), NodeId(6)];
        let lines: Vec<Written<'_>> = vec![
            Record::Run {
                algorithm: "x".into(),
                topology: "ring".into(),
                nodes: 2,
                seed: 3,
                delay: Some("1".into()),
                ids: Cow::Borrowed(&ids),
                initiators: Some(vec![NodeId(5)]),
                steps: false,
            },
            Record::Send {
                t: Time(0),
                node: NodeId(5),
                to: NodeId(6),
                id: 1,
                at: Time(1500),
                kind: "token".into(),
                text: "token 5".into(),
                msg: "m",
            },
            Record::Status {
                t: Time(1500),
                node: NodeId(6),
                state: State::Normal,
                leader: Some(NodeId(5)),
                epoch: Epoch::ZERO,
                group: None,
            },
            Record::Notice { t: Time(2000), node: NodeId(5), notice: Notice::Elected { epoch: Epoch::ZERO } },
        ];
        let text: Vec<String> = lines.iter().map(|r| serde_json::to_string(r).unwrap()).collect();
        assert_eq!(
            text,
            [
                r#"{"ev":"run","algorithm":"x","topology":"ring","nodes":2,"seed":3,"delay":"1","ids":[5,6],"initiators":[5]}"#,
                r#"{"ev":"send","t":0,"node":5,"to":6,"id":1,"at":1.5,"kind":"token","text":"token 5","msg":"m"}"#,
                r#"{"ev":"status","t":1.5,"node":6,"state":"normal","leader":5,"epoch":0}"#,
                r#"{"ev":"notice","t":2,"node":5,"notice":"elected","epoch":0}"#,
            ]
        );
        for line in &text {
            let read: Record<'_> = serde_json::from_str(line).unwrap();
            assert_ne!(read, Record::Other, "{line}");
        }
        let notice: Record<'_> = serde_json::from_str(&text[3]).unwrap();
        assert_eq!(
            notice,
            Record::Notice { t: Time(2000), node: NodeId(5), notice: Notice::Elected { epoch: Epoch::ZERO } }
        );
    }

    #[test]
    fn readers_take_what_writers_may_leave_out() {
        let read = |line: &str| serde_json::from_str::<Record<'_>>(line);
        let run = read(r#"{"ev":"run","algorithm":"x","topology":"ring","ids":[1]}"#).unwrap();
        assert!(matches!(run, Record::Run { nodes: 0, seed: 0, delay: None, initiators: None, .. }));
        assert_eq!(read(r#"{"ev":"future-record","t":2}"#).unwrap(), Record::Other);
        assert!(matches!(read(r#"{"ev":"timer","t":1,"node":1,"timer":"x"}"#).unwrap(), Record::Timer { .. }));
        let odd = read(r#"{"ev":"status","t":0,"node":1,"state":"odd","leader":null}"#).unwrap_err();
        assert!(odd.to_string().starts_with("unknown state 'odd'"), "{odd}");
        assert!(read(r#"{"ev":"start","t":-1,"node":1}"#).unwrap_err().to_string().contains("is not a time"));
    }
}
