//! What Garcia-Molina's processes say to each other (the requests and replies of its RPCs), the timers they set,
//! and the names of the rules they apply.

use elect_core::{Epoch, Invalid, Roster, Validate};
use serde::{Deserialize, Serialize};

/// Garcia-Molina messages: the requests and replies of the RPCs. `call` matches a reply to its request.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// "Are you alive?" (a null RPC).
    AreYouThere {
        /// The caller's call number.
        call: u32,
    },
    /// "Yes."
    AreYouThereReply {
        /// The call answered.
        call: u32,
    },
    /// The coordinator's Check: "are you NORMAL?"
    AreYouNormal {
        /// The caller's call number.
        call: u32,
    },
    /// Whether the callee is NORMAL.
    AreYouNormalReply {
        /// The call answered.
        call: u32,
        /// `s = NORMAL`.
        normal: bool,
    },
    /// "Stop: I am electing myself."
    Halt {
        /// The caller's call number.
        call: u32,
        /// The candidate's ballot.
        epoch: Epoch,
    },
    /// "Halted."
    HaltAck {
        /// The call answered.
        call: u32,
        /// The newest epoch the callee has seen.
        epoch: Epoch,
    },
    /// "I am your coordinator."
    NewCoordinator {
        /// The caller's call number.
        call: u32,
        /// The epoch the caller is appointed in.
        epoch: Epoch,
    },
    /// The answer to a new-coordinator.
    NewCoordinatorAck {
        /// The call answered.
        call: u32,
        /// Whether the callee accepted the caller as its coordinator.
        accepted: bool,
    },
    /// "Everybody has accepted me: resume normal operation."
    Ready {
        /// The caller's call number.
        call: u32,
        /// The epoch the caller was appointed in.
        epoch: Epoch,
    },
    /// The answer to a ready.
    ReadyAck {
        /// The call answered.
        call: u32,
        /// Whether the callee became NORMAL under the caller.
        accepted: bool,
    },
}

elect_core::message_kinds!(Msg {
    AreYouThere => "are-you-there",
    AreYouThereReply => "are-you-there-reply",
    AreYouNormal => "are-you-normal",
    AreYouNormalReply => "are-you-normal-reply",
    Halt => "halt",
    HaltAck => "halt-ack",
    NewCoordinator => "new-coordinator",
    NewCoordinatorAck => "new-coordinator-ack",
    Ready => "ready",
    ReadyAck => "ready-ack",
}, describe = Msg::text);

impl Msg {
    /// `halt (epoch 2.3, call 5)`, `new-coordinator-ack accepted (call 6)`, `are-you-normal-reply no (call 4)`.
    fn text(&self) -> String {
        let answer = |yes: bool, word: &str, not: &str| if yes { word.to_owned() } else { not.to_owned() };
        match *self {
            Self::AreYouThere { call } => format!("are-you-there (call {call})"),
            Self::AreYouThereReply { call } => format!("are-you-there-reply (call {call})"),
            Self::AreYouNormal { call } => format!("are-you-normal (call {call})"),
            Self::AreYouNormalReply { call, normal } => {
                format!("are-you-normal-reply {} (call {call})", answer(normal, "yes", "no"))
            }
            Self::Halt { call, epoch } => format!("halt (epoch {epoch}, call {call})"),
            Self::HaltAck { call, epoch } => format!("halt-ack (epoch {epoch}, call {call})"),
            Self::NewCoordinator { call, epoch } => format!("new-coordinator (epoch {epoch}, call {call})"),
            Self::NewCoordinatorAck { call, accepted } => {
                format!("new-coordinator-ack {} (call {call})", answer(accepted, "accepted", "refused"))
            }
            Self::Ready { call, epoch } => format!("ready (epoch {epoch}, call {call})"),
            Self::ReadyAck { call, accepted } => {
                format!("ready-ack {} (call {call})", answer(accepted, "accepted", "refused"))
            }
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
pub(super) const RECOVER: &str = "recover and run election";
pub(super) const ANSWER_THERE: &str = "answer are-you-there";
pub(super) const BACK_OFF: &str = "a stronger process answered, back off";
pub(super) const WAITED: &str = "not halted in time, run timeout";
pub(super) const HALT_WEAKER: &str = "no stronger answer, halt the weaker";
pub(super) const OBEY: &str = "obey a halt";
pub(super) const ADD: &str = "add a halted process to the group";
pub(super) const APPOINT: &str = "halt round over, send new-coordinator";
pub(super) const ACCEPT: &str = "accept the new coordinator";
pub(super) const COUNT: &str = "count an answer";
pub(super) const RELEASE: &str = "everybody accepted, send ready";
pub(super) const BECOME_NORMAL: &str = "accept ready, become normal";
pub(super) const LEAD: &str = "become normal, announce itself elected";
pub(super) const LATE_APPOINT: &str = "appoint a slow process on its own";
pub(super) const LATE_ACCEPTED: &str = "a slow process accepted, release it";
pub(super) const AGAIN: &str = "accept a call sent again";
pub(super) const REFUSE: &str = "refuse a stale or foreign call";
pub(super) const RESEND: &str = "send unanswered calls again";
pub(super) const GIVE_UP: &str = "a call failed, give up the claim";
pub(super) const CHECK_ALL: &str = "check that everybody is normal";
pub(super) const ANSWER_NORMAL: &str = "answer are-you-normal";
pub(super) const CHECK_OVER: &str = "check over";
pub(super) const STRONGER_BACK: &str = "a stronger process is back, elect";
pub(super) const REJOIN_ONE: &str = "halt a weaker process to rejoin it";
pub(super) const OUT_OF_GROUP: &str = "a process is out of the group, elect";
pub(super) const TIMEOUT_RUN: &str = "nothing heard, run timeout";
pub(super) const MONITORED: &str = "leave the coordinator to the monitor";
pub(super) const ALIVE: &str = "the coordinator answered";
pub(super) const SILENT: &str = "coordinator silent, run election";
pub(super) const STALE: &str = "ignore a stale answer";
pub(super) const OLD_TIMER: &str = "ignore a timer of a past role";
pub(super) const NO_HAND_OVER: &str = "ignore a resign (no hand-over)";

/// Every epoch is one a process may accept; a halt, a new-coordinator and a ready carry the caller's own ballot or
/// grant, which it started.
impl Validate for Msg {
    fn validate(&self, roster: &Roster<'_>) -> Result<(), Invalid> {
        match *self {
            Self::Halt { epoch, .. } | Self::NewCoordinator { epoch, .. } | Self::Ready { epoch, .. } => {
                roster.epoch(epoch, "the epoch is beyond the last round")?;
                roster.ensure(epoch.starter() == roster.from, "the epoch is not the caller's own")
            }
            Self::HaltAck { epoch, .. } => roster.epoch(epoch, "the epoch is beyond the last round"),
            Self::AreYouThere { .. }
            | Self::AreYouThereReply { .. }
            | Self::AreYouNormal { .. }
            | Self::AreYouNormalReply { .. }
            | Self::NewCoordinatorAck { .. }
            | Self::ReadyAck { .. } => Ok(()),
        }
    }
}

/// Garcia-Molina timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// `2T + ε` after the calls of one phase: whoever has not answered is crashed.
    Rpc,
    /// `T_wait` after backing off: nobody halted this process.
    Wait,
    /// The coordinator's next Check.
    Check,
    /// Nothing heard from the coordinator (or the halting candidate) for `timeout·T`.
    Timeout,
}
