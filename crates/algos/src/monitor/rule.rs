//! The rules the leader monitor names as it applies them ([`elect_core::Cx::rule`]), each stated in the monitor's
//! chapter of the book ("Rules, step by step"), in the same order. A message of the current epoch shows the rule of
//! the algorithm that handled it.

/// A process starts (or restarts) and opens the epoch after the newest it knows, with a fresh instance of the algorithm that initiates.
pub const START: &str = "start the next epoch";
/// The leader tells every follower it is alive, and arms its next heartbeat.
pub const BEAT: &str = "leader sends a heartbeat";
/// A follower hears its leader's heartbeat: it vouches for the leader for the quiet time and watches it again.
pub const ALIVE: &str = "heartbeat heard, the leader is alive";
/// A heartbeat or join this process has already seen (or its own heartbeat, back) changes nothing.
pub const SEEN: &str = "ignore what was already seen";
/// A process whose election ended without it follows the epoch's leader when it hears its heartbeat.
pub const FOLLOW: &str = "follow the leader of this epoch";
/// A leader hears another leader's heartbeat in its own epoch (a timing fault let both win): it opens the next epoch, whose election has one winner.
pub const TWO_LEADERS: &str = "two leaders in one epoch, start the next";
/// The leader this process follows carried its leadership into a newer epoch; the follower follows it there without an election.
pub const RENUMBER: &str = "follow the leader into its newer epoch";
/// A leader hears a weaker leader's newer epoch: it carries its own leadership above it, and everybody follows it there.
pub const RESTAMP: &str = "carry leadership above a weaker epoch";
/// A heartbeat of a newer epoch comes from a leader weaker than the one this process follows: it keeps following the stronger one.
pub const STRONGER_LEADER: &str = "keep following a stronger leader";
/// A heartbeat of a newer epoch comes from a stronger process: that election is over, and this process follows its leader without one.
pub const ADOPT: &str = "adopt the leader of a newer epoch";
/// A process back from a crash hears of a newer epoch: it opens the epoch after it, so that it never joins an election that may be over.
pub const CATCH_UP: &str = "catch up, start the epoch after";
/// A join names an epoch newer than this process's: it leaves its epoch for that one, with a fresh instance of the algorithm.
pub const JOIN: &str = "join a newer epoch";
/// A message of the current epoch goes to the epoch's instance of the algorithm, which names its own rule.
pub const DELIVER: &str = "hand the message to the election";
/// A message of an older epoch is stale and changes nothing; a leader answers it with a heartbeat, so that the sender catches up.
pub const STALE: &str = "drop a message of an older epoch";
/// A process that an epoch names as failed takes no part in it: it opens the next epoch (or, leading, carries its leadership above it).
pub const DISOWN: &str = "taken for failed, leave that epoch";
/// A timer armed by an instance this process has left, or for a role it no longer has, does nothing.
pub const OLD_TIMER: &str = "ignore a timer that is no longer due";
/// A follower that has not heard its leader for its suspicion time asks every other process whether it still hears the leader (a pre-vote).
pub const ASK: &str = "suspect the leader, ask the others";
/// Some answers to a pre-vote did not come within a round trip: the follower asks again, since a lost packet is likelier than a dead process.
pub const ASK_AGAIN: &str = "answers missing, ask again";
/// The leader, or a follower that heard the leader within the quiet time, answers that it hears the leader.
pub const VOUCH: &str = "answer a pre-vote, yes";
/// A process that has not heard the leader lately answers that it does not hear it.
pub const NO_VOUCH: &str = "answer a pre-vote, no";
/// An answer to this follower's pre-vote is counted; no majority either way yet.
pub const COUNT: &str = "count a pre-vote answer";
/// A majority of the processes hear the leader: this follower keeps following it, and asks again if it hears nothing for one more heartbeat period.
pub const KEEP: &str = "a majority hears the leader, keep it";
/// A follower kept twice in a row by the others finds nobody hears the leader: it asks once more a heartbeat period later, in case the whole machine stalled.
pub const CONFIRM: &str = "confirm a contrary pre-vote later";
/// Nobody (or no majority) hears the leader: the follower opens a new epoch that names the leader as failed and tells everybody to join it.
pub const DEPOSE: &str = "suspect the leader, open a new epoch";
/// No heartbeat for the quiet time: this follower no longer vouches that it hears its leader.
pub const QUIET: &str = "quiet time over, stop vouching";
/// No leader came out of the epoch's election in time: the process opens the next epoch.
pub const STALL: &str = "election stuck, start the next epoch";
/// The next process on the ring acknowledged a ring message, so it is alive.
pub const HOP_ACK: &str = "ring hop acknowledged";
/// A ring message went unacknowledged for a round trip: its receiver is taken for dead, the ring closes over it, and a new epoch starts.
pub const SKIP_DEAD: &str = "ring successor silent, skip it";

/// A process that takes every other for dead hands ring messages to itself; one that would go round for ever
/// (a stronger process's token, forged or sent before it died) is dropped, and the stall timer starts the next
/// epoch if no leader comes of the election.
pub const ROUND_FOREVER: &str = "alone, drop a message that never ends";

/// Every rule, in the order the chapter lists them.
pub const ALL: &[&str] = &[
    START,
    BEAT,
    ALIVE,
    SEEN,
    FOLLOW,
    TWO_LEADERS,
    RENUMBER,
    RESTAMP,
    STRONGER_LEADER,
    ADOPT,
    CATCH_UP,
    JOIN,
    DELIVER,
    STALE,
    DISOWN,
    OLD_TIMER,
    ASK,
    ASK_AGAIN,
    VOUCH,
    NO_VOUCH,
    COUNT,
    KEEP,
    CONFIRM,
    DEPOSE,
    QUIET,
    STALL,
    HOP_ACK,
    SKIP_DEAD,
    ROUND_FOREVER,
];
