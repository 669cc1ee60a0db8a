#![doc = include_str!("../../../../docs/reference/synchronizers/abd.md")]

use std::borrow::Cow;

use elect_core::{Command, Cx, Duration, Message, Peers, Port, Process, Setup, Span, Status, View};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::pulses::{DROP, FILE, IGNORE_INITIATE, Pulses, START_HEARD, describe_alg, kinds};
use crate::rounds::{RoundTimer, Rounds};

/// ABD's messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", bound = "M: Serialize + DeserializeOwned")]
pub enum AbdMsg<M> {
    /// A message of the algorithm, sent in pulse `pulse`.
    Alg {
        /// The sender's pulse.
        pulse: u32,
        /// The message.
        msg: M,
    },
    /// The sender started: start too.
    Start,
}

const OWN: &[&str] = &["start"];

/// The algorithm's message is valid for the algorithm; the synchronizer's own carry nothing to check.
impl<M: Message> elect_core::Validate for AbdMsg<M> {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        match self {
            Self::Alg { msg, .. } => msg.validate(roster),
            _ => Ok(()),
        }
    }
}

impl<M: Message> Message for AbdMsg<M> {
    fn kinds() -> Cow<'static, [&'static str]> {
        kinds::<M>(OWN)
    }

    fn kind_index(&self) -> usize {
        match self {
            Self::Alg { msg, .. } => msg.kind_index(),
            Self::Start => M::kinds().len(),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Alg { msg, .. } => msg.kind(),
            Self::Start => OWN[0],
        }
    }

    /// `pulse 3: max 9`, `start`.
    fn describe(&self) -> String {
        match self {
            Self::Alg { pulse, msg } => describe_alg(*pulse, msg),
            Self::Start => OWN[0].to_owned(),
        }
    }
}

/// One process of a round algorithm on the ABD synchronizer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AbdNode<R: Rounds> {
    pulses: Pulses<R>,
    /// The time between pulses, `2d`, in ticks.
    period: u64,
    started: bool,
    /// Ports a `start` came from (no `start` is sent back).
    heard: Vec<bool>,
}

impl<R: Rounds> AbdNode<R> {
    /// Wraps `inner`; the pulse length is twice the delay bound of `setup`.
    ///
    /// # Panics
    /// If `setup` has no delay bound; drivers check [`crate::Timing::Synchronous`] first.
    pub fn new(inner: R, setup: &Setup<'_>) -> Self {
        let d = setup.delay_bound.expect("ABD needs a delay bound; drivers check Timing::Synchronous").ticks();
        Self {
            pulses: Pulses::new(inner),
            period: 2 * d.max(1),
            started: false,
            heard: vec![false; setup.neighbors.len()],
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

    fn start(&mut self, cx: &mut Cx<'_, Self>) {
        self.started = true;
        for port in (0..self.heard.len()).filter(|&i| !self.heard[i]) {
            cx.send(Port(port as u32), AbdMsg::Start);
        }
        self.take(cx);
    }

    fn take(&mut self, cx: &mut Cx<'_, Self>) {
        self.pulses.take(cx, |cx, to, pulse, msg| cx.send(to, AbdMsg::Alg { pulse, msg }));
        if !self.pulses.inner.halted() {
            cx.set_timer(RoundTimer::NextRound, Span::exactly(Duration::from_ticks(self.period)));
        }
    }
}

impl<R: Rounds> Process for AbdNode<R> {
    type Msg = AbdMsg<R::Msg>;
    type Timer = RoundTimer;
    type Durable = ();

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Self::Msg) {
        // Named first: a pulse this step takes names the algorithm's rule instead.
        cx.rule(match msg {
            AbdMsg::Start => START_HEARD,
            AbdMsg::Alg { .. } if self.pulses.inner.halted() => DROP,
            AbdMsg::Alg { .. } => FILE,
        });
        if let AbdMsg::Start = msg {
            self.heard[from.index()] = true;
        }
        if !self.started {
            self.start(cx);
        }
        if let AbdMsg::Alg { pulse, msg } = msg {
            if !self.pulses.inner.halted() {
                self.pulses.file(pulse, from, msg);
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, _: RoundTimer) {
        if !self.pulses.inner.halted() {
            self.take(cx);
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && !self.started {
            self.start(cx);
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

    fn describe_timer(timer: &RoundTimer) -> String {
        match timer {
            RoundTimer::NextRound => "next pulse".to_owned(),
        }
    }
}
