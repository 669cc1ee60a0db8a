//! What a member shows of itself on `GET /status` and `GET /leader`: a snapshot its task keeps up to date, and the
//! numbered changes of its leadership, so that the HTTP server reads them without asking the task anything.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use elect_algos::member::{ChangeReport, ChangeState, ConfigId, VoterChange, Voters};
use elect_core::{NodeId, State};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant as Clock;

use crate::fencing::Leadership;

/// How many of the latest leadership changes a member keeps for its watchers (`GET /leader?after=V`); a watcher
/// further behind is told to read the leadership afresh.
pub(crate) const KEPT_CHANGES: usize = 1024;

/// The leadership a member showed, change after change: `first` numbers the oldest one kept. Number 0 is the
/// leadership the member started with.
#[derive(Debug)]
struct Changes {
    first: u64,
    kept: VecDeque<Leadership>,
    /// When the latest began, on the system-wide monotonic clock.
    since: Option<std::time::Duration>,
}

impl Changes {
    fn latest(&self) -> u64 {
        self.first + self.kept.len() as u64 - 1
    }
}

/// One of the member's leadership changes, as `GET /leader` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Change {
    /// Its number: the changes of one incarnation are numbered 0, 1, 2, ...
    pub(crate) version: u64,
    pub(crate) shown: Leadership,
    /// The number of the latest change.
    pub(crate) latest: u64,
}

/// Where change number `after + 1` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// Here it is.
    Next(Change),
    /// Not yet: `after` is the latest.
    Latest,
    /// No longer kept: the oldest kept is this one.
    Forgotten(u64),
    /// `after` is beyond the latest: a number from another incarnation of the member.
    Unknown,
}

/// The status snapshot of one member.
#[derive(Debug)]
pub(crate) struct Board {
    id: NodeId,
    algorithm: &'static str,
    incarnation: AtomicU64,
    /// Every member, ascending, with the name it was given by, if it was.
    members: Vec<(NodeId, Option<String>)>,
    /// Per member, in `members` order: its address (this member's is the one it listens on), or `None` while its
    /// name does not resolve.
    addrs: Mutex<Vec<Option<SocketAddr>>>,
    origin: Clock,
    /// Per member, in `members` order: when a packet of it was last accepted, in microseconds since `origin`,
    /// plus one; 0 if never.
    last_contact: Vec<AtomicU64>,
    now: Mutex<(State, Leadership)>,
    changes: Mutex<Changes>,
    /// The number of the latest change, for the watchers to wait on.
    latest: watch::Sender<u64>,
    /// In the lease mode (`Some`): until when this member holds its lease, if it does.
    lease: Mutex<Option<Option<Clock>>>,
    /// The voting configuration it holds, the change of the voters it makes (a leader), and how the last one asked
    /// of it went.
    voters: Mutex<VotersNow>,
}

/// What [`Board`] shows of the voters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VotersNow {
    pub(crate) voters: Option<Voters>,
    pub(crate) changing: Option<VoterChange>,
    pub(crate) last: Option<ChangeReport>,
}

impl Board {
    /// The board of member `id`, among `members` (each with its address, if known, and its name, if it was given
    /// one).
    pub(crate) fn new(
        id: NodeId,
        algorithm: &'static str,
        mut members: Vec<(NodeId, Option<SocketAddr>, Option<String>)>,
        shown: Leadership,
    ) -> Self {
        members.sort_unstable();
        let last_contact = members.iter().map(|_| AtomicU64::new(0)).collect();
        let addrs = Mutex::new(members.iter().map(|m| m.1).collect());
        Self {
            id,
            algorithm,
            incarnation: AtomicU64::new(0),
            members: members.into_iter().map(|(id, _, name)| (id, name)).collect(),
            addrs,
            origin: Clock::now(),
            last_contact,
            now: Mutex::new((State::Election, shown)),
            changes: Mutex::new(Changes { first: 0, kept: VecDeque::from([shown]), since: monotonic() }),
            latest: watch::Sender::new(0),
            lease: Mutex::new(None),
            voters: Mutex::new(VotersNow::default()),
        }
    }

    /// The leadership the member shows, and since when, on the system-wide monotonic clock (`None` where there is
    /// none).
    pub(crate) fn shown_since(&self) -> (Leadership, Option<std::time::Duration>) {
        let changes = self.changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        (*changes.kept.back().expect("never empty"), changes.since)
    }

    /// The member runs in the lease mode: its answers say how long its lease has left, and it does not say it
    /// leads once its lease ran out, even before its process has woken up to end its grant (after a pause).
    pub(crate) fn set_lease_mode(&self) {
        self.lease.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(None);
    }

    /// In the lease mode: the member holds its lease until `until` (none: it holds none).
    pub(crate) fn set_lease(&self, until: Option<Clock>) {
        let mut lease = self.lease.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(held) = lease.as_mut() {
            *held = until;
        }
    }

    /// In the lease mode (`Some`): how long this member's lease has left (zero if it holds none).
    pub(crate) fn lease_left(&self) -> Option<std::time::Duration> {
        let lease = *self.lease.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        lease.map(|until| until.map_or(std::time::Duration::ZERO, |u| u.saturating_duration_since(Clock::now())))
    }

    /// Whether the member leads, when it shows `shown`: it names itself, and in the lease mode its lease has time
    /// left.
    pub(crate) fn leads(&self, shown: Leadership) -> bool {
        shown.leader == Some(self.id) && self.lease_left().is_none_or(|left| !left.is_zero())
    }

    /// The member's process started as incarnation `incarnation`.
    pub(crate) fn set_incarnation(&self, incarnation: u64) {
        self.incarnation.store(incarnation, Ordering::Relaxed);
    }

    fn index(&self, member: NodeId) -> Option<usize> {
        self.members.binary_search_by_key(&member, |(id, _)| *id).ok()
    }

    /// Member `member`'s name resolved to `addr`.
    pub(crate) fn set_addr(&self, member: NodeId, addr: SocketAddr) {
        if let Some(i) = self.index(member) {
            self.addrs.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(addr);
        }
    }

    /// How long since a packet of `member` was last accepted (since this member started, if none was).
    pub(crate) fn silent_for(&self, member: NodeId) -> std::time::Duration {
        let Some(i) = self.index(member) else { return std::time::Duration::ZERO };
        let last = self.last_contact[i].load(Ordering::Relaxed).saturating_sub(1);
        self.origin.elapsed().saturating_sub(std::time::Duration::from_micros(last))
    }

    /// A packet of member `from` was accepted just now.
    pub(crate) fn contact(&self, from: NodeId) {
        if let Some(i) = self.index(from) {
            let micros = u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX - 1);
            self.last_contact[i].store(micros + 1, Ordering::Relaxed);
        }
    }

    /// The process is in `state`, and the member shows `shown`.
    pub(crate) fn publish(&self, state: State, shown: Leadership) {
        *self.now.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = (state, shown);
        let mut changes = self.changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if changes.kept.back() == Some(&shown) {
            return;
        }
        changes.since = monotonic();
        changes.kept.push_back(shown);
        if changes.kept.len() > KEPT_CHANGES {
            changes.kept.pop_front();
            changes.first += 1;
        }
        self.latest.send_replace(changes.latest());
    }

    /// The latest leadership change.
    pub(crate) fn leader(&self) -> Change {
        let changes = self.changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let latest = changes.latest();
        Change { version: latest, shown: *changes.kept.back().expect("never empty"), latest }
    }

    /// The change that came after change number `after`, if there is one yet.
    pub(crate) fn after(&self, after: u64) -> After {
        let changes = self.changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let latest = changes.latest();
        if after > latest {
            return After::Unknown;
        }
        if after == latest {
            return After::Latest;
        }
        // `after < latest`, so `after + 1` does not overflow.
        let next = after + 1;
        if next < changes.first {
            return After::Forgotten(changes.first);
        }
        let shown = changes.kept[usize::try_from(next - changes.first).expect("fewer than KEPT_CHANGES")];
        After::Next(Change { version: next, shown, latest })
    }

    /// Waits until some change comes after number `after` (at once if one has), for at most `wait`.
    pub(crate) async fn wait_after(&self, after: u64, wait: std::time::Duration) -> After {
        let mut latest = self.latest.subscribe();
        // The watch's value is published after the change is kept, so a value past `after` finds it kept.
        let _ = tokio::time::timeout(wait, latest.wait_for(|&v| v != after)).await;
        self.after(after)
    }

    /// This member's id and its incarnation.
    pub(crate) fn who(&self) -> (NodeId, u64) {
        (self.id, self.incarnation.load(Ordering::Relaxed))
    }

    /// Publishes the voters, the change being made and the last one's outcome (only when they changed).
    pub(crate) fn set_voters(&self, voters: &Voters, changing: Option<VoterChange>, last: Option<ChangeReport>) {
        let mut now = self.voters.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if now.voters.as_ref() != Some(voters) || now.changing != changing || now.last != last {
            *now = VotersNow { voters: Some(voters.clone()), changing, last };
        }
    }

    /// The JSON document of `GET /voters` (also under `voters` in `GET /status`): the configuration's id, its
    /// voters, the other members (learners: they follow and do not vote), the change being made and the last one.
    pub(crate) fn voters_json(&self) -> Value {
        let now = self.voters.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let voters = now.voters.map(|v| (v.id, v.members)).unwrap_or((ConfigId::INITIAL, Vec::new()));
        let learners: Vec<u32> =
            self.members.iter().map(|(id, _)| *id).filter(|id| !voters.1.contains(id)).map(|id| id.0).collect();
        json!({
            "id": self.id.0,
            "config": voters.0.to_string(),
            "config_epoch": voters.0.epoch.bits(),
            "config_seq": voters.0.seq,
            "voters": voters.1.iter().map(|id| id.0).collect::<Vec<_>>(),
            "learners": learners,
            "changing": now.changing.map(|c| c.to_string()),
            "last": now.last.map(|r| json!({ "change": r.change.to_string(), "outcome": outcome(r.state) })),
        })
    }

    /// The JSON document of `GET /status`.
    pub(crate) fn to_json(&self) -> Value {
        let (state, shown) = *self.now.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX);
        let addrs = self.addrs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let members: Vec<Value> = self
            .members
            .iter()
            .zip(&self.last_contact)
            .zip(addrs)
            .map(|(((id, name), last), addr)| {
                let last = last.load(Ordering::Relaxed);
                let ago = (last > 0).then(|| now.saturating_sub(last - 1) / 1000);
                let addr = addr.map(|a| a.to_string());
                let mut member =
                    json!({ "id": id.0, "addr": addr, "self": *id == self.id, "last_contact_ms_ago": ago });
                if let Some(name) = name {
                    member["name"] = json!(name);
                    member["resolved"] = json!(member["addr"].is_string());
                }
                member
            })
            .collect();
        json!({
            "id": self.id.0,
            "algorithm": self.algorithm,
            "state": state.name(),
            "leader": shown.leader.map(|l| l.0),
            "is_leader": self.leads(shown),
            "epoch": shown.epoch,
            "epoch_round": shown.epoch.round(),
            "lease_ms_left": self.lease_left().map(|left| left.as_secs_f64() * 1000.0),
            "incarnation": self.incarnation.load(Ordering::Relaxed),
            "members": members,
            "voters": self.voters_json(),
        })
    }
}

/// A change's state as JSON: `{"state": "done", "config": "2.3#1"}`, `{"state": "refused", "reason": ...}`.
pub(crate) fn outcome(state: ChangeState) -> Value {
    match state {
        ChangeState::Running => json!({ "state": "running" }),
        ChangeState::Done(id) => json!({ "state": "done", "config": id.to_string() }),
        ChangeState::Refused(reason) => json!({ "state": "refused", "reason": reason }),
        ChangeState::Failed(reason) => json!({ "state": "failed", "reason": reason }),
    }
}

/// The system-wide monotonic clock (`CLOCK_MONOTONIC`): the same for every process of one machine.
fn monotonic() -> Option<std::time::Duration> {
    #[cfg(unix)]
    {
        let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).ok()?;
        Some(std::time::Duration::from(t))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use elect_core::Epoch;

    use super::*;

    #[tokio::test]
    async fn the_status_names_the_state_leader_epoch_and_last_contacts() {
        let addr = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
        let members = vec![
            (NodeId(3), Some(addr(3)), None),
            (NodeId(1), Some(addr(1)), None),
            (NodeId(2), None, Some("elect-2.elect:7002".to_owned())),
        ];
        let board = Board::new(NodeId(1), "bully", members, Leadership { leader: None, epoch: Epoch::ZERO });
        board.set_incarnation(4);
        board.contact(NodeId(3));
        board.contact(NodeId(99)); // Not a member: ignored.
        board.publish(State::Normal, Leadership { leader: Some(NodeId(3)), epoch: Epoch::from_bits(1 << 32 | 3) });
        let v = board.to_json();
        assert_eq!(
            (v["id"].as_u64(), v["algorithm"].as_str(), v["state"].as_str()),
            (Some(1), Some("bully"), Some("normal"))
        );
        assert_eq!(
            (v["leader"].as_u64(), v["epoch"].as_u64(), v["epoch_round"].as_u64()),
            (Some(3), Some(1 << 32 | 3), Some(1))
        );
        assert_eq!((v["incarnation"].as_u64(), v["is_leader"].as_bool()), (Some(4), Some(false)));
        let members = v["members"].as_array().unwrap();
        let ids: Vec<u64> = members.iter().map(|m| m["id"].as_u64().unwrap()).collect();
        assert_eq!(ids, [1, 2, 3]);
        assert_eq!(members[0]["self"], true);
        assert_eq!(members[2]["addr"], "127.0.0.1:3");
        assert!(members[0]["last_contact_ms_ago"].is_null() && members[1]["last_contact_ms_ago"].is_null());
        // A member given by a name that does not resolve yet shows the name, and no address.
        assert_eq!(
            (members[1]["name"].as_str(), members[1]["resolved"].as_bool()),
            (Some("elect-2.elect:7002"), Some(false))
        );
        assert!(members[1]["addr"].is_null() && members[0].get("name").is_none());
        board.set_addr(NodeId(2), addr(2));
        let v = board.to_json();
        assert_eq!(
            (v["members"][1]["addr"].as_str(), v["members"][1]["resolved"].as_bool()),
            (Some("127.0.0.1:2"), Some(true))
        );
        assert!(board.silent_for(NodeId(3)) < std::time::Duration::from_secs(1));
        assert!(members[2]["last_contact_ms_ago"].as_u64().is_some_and(|ms| ms < 1000));
    }

    #[tokio::test]
    async fn leadership_changes_are_numbered_kept_and_waited_for() {
        let none = Leadership { leader: None, epoch: Epoch::ZERO };
        let board = Board::new(NodeId(1), "bully", vec![(NodeId(1), None, None)], none);
        assert_eq!(board.leader(), Change { version: 0, shown: none, latest: 0 });
        assert_eq!(board.after(0), After::Latest);
        assert_eq!(board.after(1), After::Unknown);
        let shown = |round: u64| Leadership { leader: Some(NodeId(1)), epoch: Epoch::from_bits(round << 32 | 1) };
        // Publishing what is already shown is no change.
        board.publish(State::Election, none);
        assert_eq!(board.leader().version, 0);
        board.publish(State::Normal, shown(1));
        board.publish(State::Normal, shown(1));
        assert_eq!(board.after(0), After::Next(Change { version: 1, shown: shown(1), latest: 1 }));
        // A waiter wakes on the next change, and one with nothing to wait for answers when its time is up.
        let waiting = {
            let board = std::sync::Arc::new(board);
            let waiter = board.clone();
            let task = tokio::spawn(async move { waiter.wait_after(1, std::time::Duration::from_secs(30)).await });
            tokio::task::yield_now().await;
            board.publish(State::Normal, shown(2));
            assert_eq!(task.await.unwrap(), After::Next(Change { version: 2, shown: shown(2), latest: 2 }));
            assert_eq!(board.wait_after(2, std::time::Duration::from_millis(1)).await, After::Latest);
            board
        };
        for round in 3..=(KEPT_CHANGES as u64 + 10) {
            waiting.publish(State::Normal, shown(round));
        }
        // Change k shows round k; the last KEPT_CHANGES are kept.
        let latest = KEPT_CHANGES as u64 + 10;
        assert_eq!(waiting.leader(), Change { version: latest, shown: shown(latest), latest });
        assert_eq!(waiting.after(0), After::Forgotten(11));
        assert_eq!(waiting.after(9), After::Forgotten(11));
        assert_eq!(waiting.after(10), After::Next(Change { version: 11, shown: shown(11), latest }));
        assert_eq!(waiting.after(u64::MAX), After::Unknown);
    }
}
