//! What every synchronizer shares: the rules they name for their own steps, the messages of a round algorithm
//! waiting for their pulse ([`Pulses`]), what a neighbour's `safe` messages said ([`Heard`]), and how their
//! messages are described.

use elect_core::{Peers, Port, Process, View};

use crate::rounds::{RoundCx, RoundEffect, Rounds};

// The rules a synchronizer names for its own steps, in the words of its chapter ("Rules, step by step"). A step
// that takes a pulse names the rule of the algorithm's round instead, when the round names one.
pub(crate) const TAKE_PULSE: &str = "take the next pulse";
pub(crate) const IGNORE_INITIATE: &str = "already started, ignore the initiation";
pub(crate) const START_HEARD: &str = "a neighbour started";
pub(crate) const FILE: &str = "keep the message for its pulse";
pub(crate) const DROP: &str = "halted, drop the message";
pub(crate) const ACK: &str = "acknowledge an algorithm message";
pub(crate) const COUNT_ACK: &str = "count an ack";
pub(crate) const SAFE: &str = "all acked, send safe to the neighbours";
pub(crate) const HEARD_SAFE: &str = "a neighbour is safe";
pub(crate) const NOT_ROOT: &str = "not the root, ignore the initiation";
pub(crate) const ROOT_EXPLORE: &str = "the root starts the tree";
pub(crate) const JOIN_TREE: &str = "join the tree, explore onward";
pub(crate) const EXPLORED: &str = "already in the tree, link answered";
pub(crate) const ECHO: &str = "a child echoed its subtree";
pub(crate) const ECHO_UP: &str = "subtree done, echo to the parent";
pub(crate) const HEAD: &str = "head a cluster, say hello";
pub(crate) const JOIN_CLUSTER: &str = "join the cluster, say hello";
pub(crate) const HELLO: &str = "learn a neighbour's cluster";
pub(crate) const LINKS: &str = "merge a child's best links";
pub(crate) const LINKS_UP: &str = "send the best links up";
pub(crate) const CHILD_SAFE: &str = "a cluster child is safe";
pub(crate) const SAFE_UP: &str = "safe, tell the cluster parent";
pub(crate) const CLUSTER_SAFE: &str = "the head finds its cluster safe";
pub(crate) const PASS_CLUSTER_SAFE: &str = "cluster safe, pass it on";
pub(crate) const NEIGHBOUR_SAFE: &str = "a neighbouring cluster is safe";
pub(crate) const CHILD_READY: &str = "a cluster child is ready";
pub(crate) const READY_UP: &str = "ready, tell the cluster parent";

/// The messages of one round, by the port they arrived on.
type Inbox<M> = Vec<(Port, M)>;

/// The messages of one run of a round algorithm waiting for their round, and the algorithm itself: the part
/// every synchronizer shares.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Pulses<R: Rounds> {
    pub(crate) inner: R,
    /// The last round taken (0 before the first).
    pub(crate) round: u32,
    /// Messages by the pulse that sent them, each for the round after it. Sorted by pulse; short (a process is
    /// at most a pulse or two behind its neighbours).
    waiting: Vec<(u32, Inbox<R::Msg>)>,
    /// Scratch space for one round's effects.
    effects: Vec<RoundEffect<R::Msg>>,
}

impl<R: Rounds> Pulses<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self { inner, round: 0, waiting: Vec::new(), effects: Vec::new() }
    }

    /// Files a message its sender sent in pulse `pulse`, for round `pulse + 1`, or for the next round if that
    /// one was already taken (a delay bound that did not hold).
    pub(crate) fn file(&mut self, pulse: u32, from: Port, msg: R::Msg) {
        let pulse = pulse.max(self.round);
        match self.waiting.binary_search_by_key(&pulse, |(p, _)| *p) {
            Ok(i) => self.waiting[i].1.push((from, msg)),
            Err(i) => self.waiting.insert(i, (pulse, vec![(from, msg)])),
        }
    }

    /// Takes the next round (a no-op for the algorithm once it halted) and hands each message it sends, with
    /// its port and pulse, to `send`; returns how many it sent.
    pub(crate) fn take<P: Process>(
        &mut self,
        cx: &mut elect_core::Cx<'_, P>,
        mut send: impl FnMut(&mut elect_core::Cx<'_, P>, Port, u32, R::Msg),
    ) -> u32 {
        self.round = self.round.saturating_add(1);
        let round = self.round;
        let inbox = match self.waiting.first() {
            Some((p, _)) if *p < round => self.waiting.remove(0).1,
            _ => Vec::new(),
        };
        cx.notify(elect_core::Notice::Pulse { pulse: round });
        cx.rule(TAKE_PULSE);
        if self.inner.halted() {
            return 0;
        }
        let mut effects = std::mem::take(&mut self.effects);
        let mut round_cx = RoundCx::new(round, cx.now(), &mut effects);
        self.inner.round(&mut round_cx, &inbox);
        if let Some(rule) = round_cx.applied() {
            cx.rule(rule);
        }
        let mut sent = 0;
        for effect in effects.drain(..) {
            match effect {
                RoundEffect::Send { to, msg } => {
                    sent += 1;
                    send(cx, to, round, msg);
                }
                RoundEffect::Notify(notice) => cx.notify(notice),
            }
        }
        self.effects = effects;
        sent
    }

    /// Whether the algorithm sends nothing after the round just taken.
    pub(crate) fn quiet(&self) -> bool {
        self.inner.quiet_after(self.round)
    }

    /// The algorithm's view, with the last pulse taken (`flooding: max 9, pulse 3`).
    pub(crate) fn view(&self, peers: &Peers<'_>) -> View {
        let view = self.inner.view(peers);
        if self.round == 0 { view } else { view.with("pulse", self.round) }
    }
}

/// `pulse 3: max 9`: an algorithm message with the pulse that sent it.
pub(crate) fn describe_alg<M: elect_core::Message>(pulse: u32, msg: &M) -> String {
    format!("pulse {pulse}: {}", msg.describe())
}

/// `safe(3)`, `safe(3, last)`: a control message for pulse `pulse` with the flags that are set.
pub(crate) fn describe_control(kind: &str, pulse: u32, flags: &[(bool, &str)]) -> String {
    let mut out = format!("{kind}({pulse}");
    for (_, flag) in flags.iter().filter(|(set, _)| *set) {
        out.push_str(", ");
        out.push_str(flag);
    }
    out.push(')');
    out
}

/// Names `rule` unless the step has taken a pulse since the pulse `before`: the algorithm's round then names the
/// step.
pub(crate) fn name<P: Process>(cx: &mut elect_core::Cx<'_, P>, before: u32, now: u32, rule: &'static str) {
    if now == before {
        cx.rule(rule);
    }
}

/// Where a neighbour's pulses stand, from its `safe` messages: the last pulse it declared, and whether it said
/// that was its last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Heard {
    pub(crate) pulse: u32,
    pub(crate) last: bool,
}

impl Heard {
    /// Records a `safe` for `pulse`.
    pub(crate) fn safe(&mut self, pulse: u32, last: bool) {
        self.pulse = self.pulse.max(pulse);
        self.last |= last;
    }

    /// Whether nothing more is awaited from this neighbour for pulse `p`.
    pub(crate) fn done_with(self, p: u32) -> bool {
        self.pulse >= p || self.last
    }

    /// Whether the neighbour still needs this process's `safe` for pulse `p`.
    pub(crate) fn needs(self, p: u32) -> bool {
        !self.last || p <= self.pulse
    }
}

/// The message kinds of a synchronizer carrying `M`: `M`'s kinds, then its own.
pub(crate) fn kinds<M: elect_core::Message>(own: &[&'static str]) -> std::borrow::Cow<'static, [&'static str]> {
    let mut all = M::kinds().into_owned();
    all.extend_from_slice(own);
    std::borrow::Cow::Owned(all)
}
