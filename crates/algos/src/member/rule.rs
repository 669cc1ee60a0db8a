//! The rules the member names as it applies them ([`elect_core::Cx::rule`]), each stated in the member's chapter of
//! the book ("Rules, step by step"), in the same order. A packet of the election shows the rule of the monitor or the
//! algorithm that handled it.

/// A packet its sender sent before it last restarted is dropped: what it says is out of date.
pub const OLD_INCARNATION: &str = "drop a packet from before a restart";
/// A packet of the election (or a leader's notice that it leaves) goes to the leader monitor and the algorithm, which name their own rules; a member whose leader leaves elects again at once.
pub const PASS: &str = "hand the packet to the monitor";
/// A member that resigned or left, or must never lead, takes no part in elections; it still corrects a stale grant and answers questions.
pub const AWAY: &str = "sitting out, take no part";
/// An announcement tells this member of a newer epoch, or of a leader's new grant; a member that knows a newer epoch than the sender tells it so.
pub const ANNOUNCE: &str = "hear a newer epoch or grant";
/// A member that started knowing no epoch asks the others; each answers with the highest epoch it knows.
pub const ANSWER: &str = "answer a question about epochs";
/// Once the packets of an instant have all arrived, each sender that had seen less than this member (or led under an older grant), or asked, is told what this member knows, once.
pub const TELL: &str = "tell the instant's senders what they missed";
/// A timer armed before the algorithm was restarted, or while sitting out, does nothing.
pub const OLD_TIMER: &str = "ignore a timer of an earlier instance";
/// Another member's claim to lead was not renewed within its life: this member no longer counts it.
pub const CLAIM: &str = "a claim expired";
/// The algorithm kept this member leader for the settling wait: it makes itself a fencing grant and announces it.
pub const SETTLE: &str = "leadership settled, grant it";
/// The answers to a starting member's question did not reach a majority in a round trip: it asks again.
pub const ASKED: &str = "too few answers, ask again";
/// A member that resigned has sat out its hold (or one that started has waited out its takeover delay): it takes part in elections again.
pub const WAKE: &str = "resign hold over, rejoin";
/// A transfer from the leader of the newest epoch this member knows: the member it names starts an election; a member the algorithm ranks above that one stands aside (a leader among them resigns first); the others follow the election.
pub const TRANSFER: &str = "hand leadership over";
/// A transfer's deadline came: a member standing aside goes on standing aside while the member it names leads under a newer epoch, and takes part again otherwise.
pub const DEADLINE: &str = "transfer deadline, rejoin unless taken over";
/// Past the deadline, the member a transfer named stopped leading (its claim lapsed or it said so): the members standing aside for it take part again.
pub const ASIDE_OVER: &str = "new leader gone, stop standing aside";

/// Lease mode: a member asked to back a leader's lease backs it, unless it promised another member within its promise time (or it started within it), or it takes part and its algorithm names another leader (a member that sits out backs anyone).
pub const BACK: &str = "back a lease unless promised to another";
/// Lease mode: a member counts who backed its round; once a majority did, it holds the lease until that round's hold runs out.
pub const BACKED: &str = "count a backer of a lease round";
/// Lease mode: a member the algorithm names leader asks everybody to back it again: every heartbeat period while it holds a lease, every T while it seeks one.
pub const RENEW: &str = "ask for the lease again";
/// Lease mode: the hold of a round ran out; with no newer round backed, the lease is over and the grant ends.
pub const HOLD: &str = "a lease round ran out";
/// Lease mode: a member's promise to back only one leader ran out: it may back anyone.
pub const PROMISE: &str = "a promise to back one leader ran out";
/// Lease mode: a leader that no majority backed within its grace (a new leader's, or one whose lease lapsed) goes quiet: it asks for nothing more, and its algorithm says nothing, for a promise time or until it is named leader in another epoch.
pub const QUIET: &str = "no lease within the grace, go quiet";
/// Lease mode: a leader quiet for a promise time asks for a lease again, as a new leader, and its algorithm speaks again.
pub const TRY_AGAIN: &str = "quiet for a promise time, ask again";
/// A leader asked to change the voters first makes sure a majority of its voters holds its configuration, then sends the new one; the change is done once a majority of the new voters (and the member added) holds it.
pub const CHANGE: &str = "change the voters, one member at a time";
/// A member takes a newer configuration of the voters from the leader of the newest epoch it knows, durable before it answers; it tells a sender whose configuration is older its own.
pub const CONFIG: &str = "hear a configuration of the voters";
/// A leader changing the voters counts the members that hold the configuration it sent.
pub const CONFIG_ACK: &str = "count a holder of the configuration";
/// A round trip of a change went by short of a majority: the configuration goes again to those that do not hold it; after five, the change is given up.
pub const CHANGE_AGAIN: &str = "no majority yet, send the configuration again";

/// Every rule, in the order the chapter lists them.
pub const ALL: &[&str] = &[
    OLD_INCARNATION,
    PASS,
    AWAY,
    ANNOUNCE,
    ANSWER,
    TELL,
    OLD_TIMER,
    CLAIM,
    SETTLE,
    ASKED,
    WAKE,
    TRANSFER,
    DEADLINE,
    ASIDE_OVER,
    BACK,
    BACKED,
    RENEW,
    HOLD,
    PROMISE,
    QUIET,
    TRY_AGAIN,
    CHANGE,
    CONFIG,
    CONFIG_ACK,
    CHANGE_AGAIN,
];
