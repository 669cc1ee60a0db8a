#![doc = include_str!("../../../../docs/reference/synchronizers/alpha.md")]

use std::borrow::Cow;

use elect_core::{Command, Cx, Message, Peers, Port, Process, Setup, Status, View};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::pulses::{
    ACK, COUNT_ACK, HEARD_SAFE, Heard, IGNORE_INITIATE, Pulses, SAFE, describe_alg, describe_control, kinds, name,
};
use crate::rounds::{RoundTimer, Rounds};

/// α's messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", bound = "M: Serialize + DeserializeOwned")]
pub enum AlphaMsg<M> {
    /// A message of the algorithm, sent in pulse `pulse`.
    Alg {
        /// The sender's pulse.
        pulse: u32,
        /// The message.
        msg: M,
    },
    /// An algorithm message arrived.
    Ack,
    /// Every message the sender sent in pulse `pulse` has arrived; with `last`, it sends nothing after this pulse
    /// (its algorithm halted, or takes one more, silent, round).
    Safe {
        /// The pulse.
        pulse: u32,
        /// Whether it is the sender's last `safe`.
        last: bool,
    },
}

const OWN: &[&str] = &["ack", "safe"];

/// The algorithm's message is valid for the algorithm; the synchronizer's own carry nothing to check.
impl<M: Message> elect_core::Validate for AlphaMsg<M> {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        match self {
            Self::Alg { msg, .. } => msg.validate(roster),
            _ => Ok(()),
        }
    }
}

impl<M: Message> Message for AlphaMsg<M> {
    fn kinds() -> Cow<'static, [&'static str]> {
        kinds::<M>(OWN)
    }

    fn kind_index(&self) -> usize {
        match self {
            Self::Alg { msg, .. } => msg.kind_index(),
            Self::Ack => M::kinds().len(),
            Self::Safe { .. } => M::kinds().len() + 1,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Alg { msg, .. } => msg.kind(),
            Self::Ack => OWN[0],
            Self::Safe { .. } => OWN[1],
        }
    }

    /// `pulse 3: max 9`, `ack`, `safe(3)`, `safe(3, last)`.
    fn describe(&self) -> String {
        match self {
            Self::Alg { pulse, msg } => describe_alg(*pulse, msg),
            Self::Ack => OWN[0].to_owned(),
            Self::Safe { pulse, last } => describe_control(OWN[1], *pulse, &[(*last, "last")]),
        }
    }
}

/// One process of a round algorithm on the α synchronizer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AlphaNode<R: Rounds> {
    pulses: Pulses<R>,
    started: bool,
    /// Taken its last round: only acknowledges.
    done: bool,
    /// Own messages of the current pulse not yet acknowledged.
    unacked: u32,
    /// The last pulse this process declared safe (0: none).
    safe: u32,
    /// It told its neighbours its last `safe`.
    told_last: bool,
    /// Per port: the neighbour's `safe`s.
    heard: Vec<Heard>,
}

impl<R: Rounds> AlphaNode<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, setup: &Setup<'_>) -> Self {
        Self {
            pulses: Pulses::new(inner),
            started: false,
            done: false,
            unacked: 0,
            safe: 0,
            told_last: false,
            heard: vec![Heard::default(); setup.neighbors.len()],
        }
    }

    /// The algorithm.
    pub fn inner(&self) -> &R {
        &self.pulses.inner
    }

    /// The last pulse taken.
    pub fn pulse(&self) -> u32 {
        self.pulses.round
    }

    fn take(&mut self, cx: &mut Cx<'_, Self>) {
        self.unacked = self.pulses.take(cx, |cx, to, pulse, msg| cx.send(to, AlphaMsg::Alg { pulse, msg }));
        // A round after its last safe is the silent final round: nothing follows.
        self.done = self.told_last;
    }

    /// Declares the current pulse safe once every own message is acknowledged, and takes the next pulses while
    /// every neighbour is safe. `before` is the pulse the step began in.
    fn advance(&mut self, cx: &mut Cx<'_, Self>, before: u32) {
        while !self.done {
            let p = self.pulses.round;
            if self.safe < p {
                if self.unacked > 0 {
                    return;
                }
                let last = self.pulses.quiet();
                name(cx, before, p, SAFE);
                for (port, heard) in self.heard.iter().enumerate() {
                    if heard.needs(p) {
                        cx.send(Port(port as u32), AlphaMsg::Safe { pulse: p, last });
                    }
                }
                (self.safe, self.told_last) = (p, last);
                if self.pulses.inner.halted() {
                    self.done = true;
                    return;
                }
            }
            if !self.heard.iter().all(|h| h.done_with(p)) {
                return;
            }
            self.take(cx);
        }
    }

    fn start(&mut self, cx: &mut Cx<'_, Self>) {
        self.started = true;
        self.take(cx);
    }
}

impl<R: Rounds> Process for AlphaNode<R> {
    type Msg = AlphaMsg<R::Msg>;
    type Timer = RoundTimer;
    type Durable = ();

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Self::Msg) {
        // Named first: a pulse this step takes names the algorithm's rule instead.
        cx.rule(match msg {
            AlphaMsg::Alg { .. } => ACK,
            AlphaMsg::Ack => COUNT_ACK,
            AlphaMsg::Safe { .. } => HEARD_SAFE,
        });
        let before = self.pulses.round;
        if !self.started {
            self.start(cx);
        }
        match msg {
            AlphaMsg::Alg { pulse, msg } => {
                cx.send(from, AlphaMsg::Ack);
                if !self.done {
                    self.pulses.file(pulse, from, msg);
                }
            }
            AlphaMsg::Ack => self.unacked = self.unacked.saturating_sub(1),
            AlphaMsg::Safe { pulse, last } => self.heard[from.index()].safe(pulse, last),
        }
        self.advance(cx, before);
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && !self.started {
            let before = self.pulses.round;
            self.start(cx);
            self.advance(cx, before);
        } else if cmd == Command::Initiate {
            cx.rule(IGNORE_INITIATE);
        }
    }

    fn status(&self) -> Status {
        self.pulses.inner.status()
    }

    fn view(&self, peers: &Peers<'_>) -> View {
        self.pulses.view(peers)
    }

    fn describe_timer(_: &RoundTimer) -> String {
        "no timer (a pulse follows the neighbours' safe)".to_owned()
    }
}
