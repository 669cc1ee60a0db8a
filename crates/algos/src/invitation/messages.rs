//! What Invitation processes say to each other, the timers they set, and the names of the rules a step applies (in
//! the words of the chapter's "Rules, step by step").

use elect_core::{GroupId, Rank};
use serde::{Deserialize, Serialize};

/// Invitation messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// "Are you a coordinator?" (one round of a check).
    AreYouCoordinator {
        /// The check round, to match the replies.
        round: u32,
    },
    /// The answer.
    AreYouCoordinatorReply {
        /// The check round.
        round: u32,
        /// NORMAL and coordinator.
        yes: bool,
    },
    /// "Am I still a member of your group `group`?"
    AreYouThere {
        /// The asker's group.
        group: GroupId,
    },
    /// The answer.
    AreYouThereReply {
        /// The group asked about.
        group: GroupId,
        /// The receiver coordinates it and the asker is a member.
        yes: bool,
    },
    /// "Join group `group`, coordinated by `coordinator`."
    Invitation {
        /// The inviting coordinator.
        coordinator: Rank,
        /// The new group.
        group: GroupId,
    },
    /// To the inviting coordinator: the sender joins.
    Accept {
        /// The group joined.
        group: GroupId,
    },
    /// From the coordinator: the group is formed.
    Ready {
        /// The group.
        group: GroupId,
    },
    /// To the coordinator: `ready` arrived.
    Ack {
        /// The group.
        group: GroupId,
    },
    /// The pre-vote: "do you still hear the coordinator of group `group`?", from a member of that group that its
    /// coordinator did not answer.
    DoYouHear {
        /// The asker's group.
        group: GroupId,
    },
    /// The answer: yes iff the sender is NORMAL in that group and coordinates it, or its coordinator answered its
    /// last exchange.
    DoYouHearReply {
        /// The group asked about.
        group: GroupId,
        /// The sender hears its coordinator.
        yes: bool,
    },
}

elect_core::message_kinds!(Msg {
    AreYouCoordinator => "are-you-coordinator",
    AreYouCoordinatorReply => "are-you-coordinator-reply",
    AreYouThere => "are-you-there",
    AreYouThereReply => "are-you-there-reply",
    Invitation => "invitation",
    Accept => "accept",
    Ready => "ready",
    Ack => "ack",
    DoYouHear => "do-you-hear",
    DoYouHearReply => "do-you-hear-reply",
}, describe = Msg::text);

impl Msg {
    /// `are-you-coordinator (round 2)`, `invitation to group (4, 6) under 6`, `accept group (4, 6)`.
    pub(super) fn text(&self) -> String {
        let yes = |yes: bool| if yes { "yes" } else { "no" };
        match *self {
            Self::AreYouCoordinator { round } => format!("are-you-coordinator (round {round})"),
            Self::AreYouCoordinatorReply { round, yes: y } => {
                format!("are-you-coordinator-reply {} (round {round})", yes(y))
            }
            Self::AreYouThere { group } => format!("are-you-there in group {group}"),
            Self::AreYouThereReply { group, yes: y } => format!("are-you-there-reply {} for group {group}", yes(y)),
            Self::Invitation { coordinator, group } => format!("invitation to group {group} under {coordinator}"),
            Self::Accept { group } => format!("accept group {group}"),
            Self::Ready { group } => format!("ready for group {group}"),
            Self::Ack { group } => format!("ack for group {group}"),
            Self::DoYouHear { group } => format!("do-you-hear the coordinator of group {group}"),
            Self::DoYouHearReply { group, yes: y } => format!("do-you-hear-reply {} for group {group}", yes(y)),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
pub(super) const RECOVER: &str = "form a singleton group";
pub(super) const LOOK: &str = "look for other coordinators";
pub(super) const SKIP_CHECK: &str = "not a coordinator, skip the check";
pub(super) const ANSWER_COORDINATOR: &str = "answer are-you-coordinator";
pub(super) const NOTE: &str = "note another coordinator";
pub(super) const NOT_ONE: &str = "ignore a no or a late reply";
pub(super) const ALONE: &str = "no other coordinator, stay";
pub(super) const MERGE_DELAY: &str = "wait the merge delay";
pub(super) const MERGE_NOW: &str = "merge and invite the others";
pub(super) const SKIP_MERGE: &str = "invited meanwhile, skip the merge";
pub(super) const FORWARD: &str = "forward the invitation and accept";
pub(super) const ACCEPT: &str = "accept the invitation";
pub(super) const BUSY: &str = "busy, ignore an invitation";
pub(super) const ADD: &str = "add the member";
pub(super) const SEND_READY: &str = "send ready to who accepted";
pub(super) const JOIN: &str = "join the group and ack";
pub(super) const NOTE_ACK: &str = "note an ack";
pub(super) const ALL_ACKED: &str = "every member acked";
pub(super) const READY_AGAIN: &str = "ready again to who did not ack";
pub(super) const DROP: &str = "drop the members that did not ack";
pub(super) const ASK: &str = "ask the coordinator are-you-there";
pub(super) const SKIP_TIMEOUT: &str = "nothing to ask, skip the timeout";
pub(super) const ANSWER_THERE: &str = "answer are-you-there";
pub(super) const STILL: &str = "the coordinator still has it";
pub(super) const LEFT_OUT: &str = "left out, form a singleton group";
pub(super) const NO_ANSWER: &str = "no answer, form a singleton group";
pub(super) const ASK_OTHERS: &str = "no answer, ask the others whether they hear it";
pub(super) const ANSWER_HEAR: &str = "answer do-you-hear";
pub(super) const KEPT: &str = "another hears the coordinator, stay";
pub(super) const NOT_HEARD: &str = "note a no";
pub(super) const NOBODY_HEARS: &str = "nobody hears it, form a singleton group";
pub(super) const ASK_AGAIN: &str = "no answer, ask again";
pub(super) const INVITE_LEFT: &str = "invite a member left behind";
pub(super) const MERGING_SILENT: &str = "merging, let the invitation answer";
pub(super) const LATE_ACCEPT: &str = "answer a late accept with ready";
pub(super) const ACK_AGAIN: &str = "ack a ready again";
pub(super) const ACCEPT_AGAIN: &str = "no ready, accept again";
pub(super) const NO_READY: &str = "no ready, form a singleton group";
pub(super) const STALE: &str = "ignore a stale message";
pub(super) const OLD_TIMER: &str = "ignore a timer of a past role";
pub(super) const NO_HAND_OVER: &str = "ignore a resign (no hand-over)";

/// Every group was created by a member, and an invitation names a member as the coordinator.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        match *self {
            Self::Invitation { coordinator, group } => {
                roster.rank(coordinator, "the coordinator is not a member")?;
                roster.member(group.creator, "the group's creator is not a member")
            }
            Self::AreYouThere { group }
            | Self::AreYouThereReply { group, .. }
            | Self::Accept { group }
            | Self::Ready { group }
            | Self::Ack { group }
            | Self::DoYouHear { group }
            | Self::DoYouHearReply { group, .. } => roster.member(group.creator, "the group's creator is not a member"),
            Self::AreYouCoordinator { .. } | Self::AreYouCoordinatorReply { .. } => Ok(()),
        }
    }
}

/// Invitation timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// Periodic: a coordinator looks for other coordinators.
    Check,
    /// The answers of a check are in.
    CheckReplies,
    /// The merge delay is over.
    Merge,
    /// Periodic: a member checks on its coordinator.
    Timeout,
    /// The coordinator did not answer `are-you-there` in time.
    TimeoutReply,
    /// The accepts of an invitation are in.
    AcceptWait,
    /// `ready` did not come in time.
    ReadyWait,
    /// The acks of `ready` are in.
    AckWait,
    /// The answers of a pre-vote are in.
    PreVoteWait,
}
