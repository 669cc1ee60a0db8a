//! What monitored processes say to each other, and the timers a monitored process arms. Every message of the
//! algorithm travels tagged with the epoch it belongs to and the process whose failure opened that epoch; the
//! monitor's own messages (heartbeats, joins, ring acknowledgements and the pre-vote) are counted as kinds of their
//! own, after the algorithm's. A message from outside is valid only if every epoch it carries is one a process may
//! accept and every process it names is a member.

use std::borrow::Cow;

use elect_core::{Epoch, Invalid, Message, NodeId, Roster, Validate};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Messages: the algorithm's, tagged with an epoch, and the monitor's own.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", bound = "M: Serialize + DeserializeOwned")]
pub enum MonitorMsg<M> {
    /// A message of the election algorithm in `epoch`.
    Inner {
        /// The epoch of the election it belongs to.
        epoch: Epoch,
        /// The process whose failure started the epoch, if one did (not for a recovery or a first election).
        down: Option<NodeId>,
        /// The algorithm's message.
        msg: M,
    },
    /// A message of the election algorithm in `epoch`, sent round a logical ring to the next live process
    /// (`forward`) or the previous one; the receiver acknowledges it.
    Ring {
        /// The epoch of the election it belongs to.
        epoch: Epoch,
        /// The process whose failure started the epoch, if one did.
        down: Option<NodeId>,
        /// Sent to the next live process, or to the previous one.
        forward: bool,
        /// The algorithm's message.
        msg: M,
    },
    /// "Your `ring` message of `epoch` arrived."
    HopAck {
        /// The epoch of the acknowledged message.
        epoch: Epoch,
    },
    /// The leader of `epoch` is alive.
    Heartbeat {
        /// The leader's epoch.
        epoch: Epoch,
        /// The heartbeat's number, for forwarding each once.
        seq: u64,
        /// The process whose failure started the epoch, if one did, as its `join` and its election's messages
        /// name it: a process that enters the epoch on a heartbeat names it in its own messages too.
        down: Option<NodeId>,
    },
    /// A leader left its epoch for `epoch`: its followers should follow instead of suspecting it.
    Join {
        /// The epoch to join.
        epoch: Epoch,
        /// The process whose failure started it, if one did.
        down: Option<NodeId>,
    },
    /// "Do you still hear `leader`, the leader of `epoch`?": the pre-vote of a follower that no longer hears its
    /// leader, before it opens a new epoch (see the module documentation).
    PreVote {
        /// The epoch of the leader it asks about.
        epoch: Epoch,
        /// The leader.
        leader: NodeId,
    },
    /// The answer to a pre-vote of `epoch`: whether the sender heard the leader within the quiet time (or is that
    /// leader).
    PreVoteReply {
        /// The epoch asked about.
        epoch: Epoch,
        /// Whether it hears the leader.
        hears: bool,
    },
}

/// The monitor's own message kinds, after the algorithm's (in the order of [`MonitorMsg::kind_index`]), which
/// closed-form bounds of one election leave out.
pub(crate) const MONITOR_KINDS: &[&str] = &["heartbeat", "join", "hop-ack", "pre-vote", "pre-vote-reply"];

impl<M: Message> Message for MonitorMsg<M> {
    fn kinds() -> Cow<'static, [&'static str]> {
        let mut kinds = M::kinds().into_owned();
        kinds.extend_from_slice(MONITOR_KINDS);
        Cow::Owned(kinds)
    }

    fn kind_index(&self) -> usize {
        match self {
            Self::Inner { msg, .. } | Self::Ring { msg, .. } => msg.kind_index(),
            Self::Heartbeat { .. } => M::kinds().len(),
            Self::Join { .. } => M::kinds().len() + 1,
            Self::HopAck { .. } => M::kinds().len() + 2,
            Self::PreVote { .. } => M::kinds().len() + 3,
            Self::PreVoteReply { .. } => M::kinds().len() + 4,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Inner { msg, .. } | Self::Ring { msg, .. } => msg.kind(),
            Self::Heartbeat { .. } => "heartbeat",
            Self::Join { .. } => "join",
            Self::HopAck { .. } => "hop-ack",
            Self::PreVote { .. } => "pre-vote",
            Self::PreVoteReply { .. } => "pre-vote-reply",
        }
    }

    fn describe(&self) -> String {
        match self {
            // The algorithm's message may name an epoch of its own (Bully's election epoch): say whose this is.
            Self::Inner { epoch, msg, .. } => format!("{}, in the monitor's epoch {epoch}", msg.describe()),
            Self::Ring { epoch, msg, .. } => format!("{}, in the monitor's epoch {epoch}, ring hop", msg.describe()),
            Self::HopAck { epoch } => format!("hop-ack (epoch {epoch})"),
            Self::Heartbeat { epoch, .. } => format!("heartbeat (epoch {epoch})"),
            Self::Join { epoch, down: Some(down) } => format!("join epoch {epoch} ({down} failed)"),
            Self::Join { epoch, down: None } => format!("join epoch {epoch}"),
            Self::PreVote { leader, .. } => format!("pre-vote: do you hear {leader}?"),
            Self::PreVoteReply { hears: true, .. } => "pre-vote-reply: yes".to_owned(),
            Self::PreVoteReply { hears: false, .. } => "pre-vote-reply: no".to_owned(),
        }
    }
}

/// Every epoch is one a process may accept, every process a message names as failed is a member, and the
/// algorithm's message is valid for the algorithm.
impl<M: Message> Validate for MonitorMsg<M> {
    fn validate(&self, roster: &Roster<'_>) -> Result<(), Invalid> {
        let (epoch, down) = match self {
            Self::Inner { epoch, down, msg } | Self::Ring { epoch, down, msg, .. } => {
                msg.validate(roster)?;
                (*epoch, *down)
            }
            Self::Heartbeat { epoch, down, .. } | Self::Join { epoch, down } => (*epoch, *down),
            Self::PreVote { epoch, leader } => (*epoch, Some(*leader)),
            Self::HopAck { epoch } | Self::PreVoteReply { epoch, .. } => (*epoch, None),
        };
        roster.epoch(epoch, "the epoch is beyond the last round")?;
        down.map_or(Ok(()), |d| roster.member(d, "the process it names is not a member"))
    }
}

/// Timers: the algorithm's (of one epoch), and the monitor's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MonitorTimer<T> {
    /// The algorithm's timer, armed by the instance of the algorithm built in `epoch`.
    Inner {
        /// The epoch the instance that armed it was built in; once the process has built another, it is ignored.
        epoch: Epoch,
        /// The algorithm's timer.
        timer: T,
    },
    /// Time for the leader's next heartbeat.
    Beat,
    /// No heartbeat for the timeout: suspect the leader.
    Watch,
    /// The oldest unacknowledged ring message is overdue: its receiver is dead.
    Hop,
    /// No leader for the first timeout: the election is stuck.
    Stall,
    /// No heartbeat from the leader for the quiet time, `(heartbeat + 1)·T`: this follower no longer vouches that it
    /// hears it.
    Quiet,
    /// A try of a pre-vote is over: the answers that could come are in.
    Poll,
}
