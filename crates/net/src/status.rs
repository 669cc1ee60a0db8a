//! What a member shows of itself on `GET /status`: a snapshot its task keeps up to date, so that the HTTP server
//! reads it without asking the task anything.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use elect_core::{NodeId, State, epoch};
use serde_json::{Value, json};
use tokio::time::Instant as Clock;

use crate::fencing::Leadership;

/// The status snapshot of one member.
#[derive(Debug)]
pub(crate) struct Board {
    id: NodeId,
    algorithm: &'static str,
    incarnation: AtomicU64,
    /// Every member, ascending, with its address (this member's is the one it listens on).
    members: Vec<(NodeId, SocketAddr)>,
    origin: Clock,
    /// Per member, in `members` order: when a packet of it was last accepted, in microseconds since `origin`,
    /// plus one; 0 if never.
    last_contact: Vec<AtomicU64>,
    now: Mutex<(State, Leadership)>,
}

impl Board {
    pub(crate) fn new(
        id: NodeId,
        algorithm: &'static str,
        mut members: Vec<(NodeId, SocketAddr)>,
        shown: Leadership,
    ) -> Self {
        members.sort_unstable();
        let last_contact = members.iter().map(|_| AtomicU64::new(0)).collect();
        Self {
            id,
            algorithm,
            incarnation: AtomicU64::new(0),
            members,
            origin: Clock::now(),
            last_contact,
            now: Mutex::new((State::Election, shown)),
        }
    }

    /// The member's process started as incarnation `incarnation`.
    pub(crate) fn set_incarnation(&self, incarnation: u64) {
        self.incarnation.store(incarnation, Ordering::Relaxed);
    }

    /// A packet of member `from` was accepted just now.
    pub(crate) fn contact(&self, from: NodeId) {
        if let Ok(i) = self.members.binary_search_by_key(&from, |&(id, _)| id) {
            let micros = u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX - 1);
            self.last_contact[i].store(micros + 1, Ordering::Relaxed);
        }
    }

    /// The process is in `state`, and the member shows `shown`.
    pub(crate) fn publish(&self, state: State, shown: Leadership) {
        *self.now.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = (state, shown);
    }

    /// The JSON document of `GET /status`.
    pub(crate) fn to_json(&self) -> Value {
        let (state, shown) = *self.now.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX);
        let members: Vec<Value> = self
            .members
            .iter()
            .zip(&self.last_contact)
            .map(|(&(id, addr), last)| {
                let last = last.load(Ordering::Relaxed);
                let ago = (last > 0).then(|| now.saturating_sub(last - 1) / 1000);
                json!({ "id": id.0, "addr": addr.to_string(), "self": id == self.id, "last_contact_ms_ago": ago })
            })
            .collect();
        json!({
            "id": self.id.0,
            "algorithm": self.algorithm,
            "state": state.name(),
            "leader": shown.leader.map(|l| l.0),
            "is_leader": shown.leader == Some(self.id),
            "epoch": shown.epoch,
            "epoch_round": epoch::round(shown.epoch),
            "incarnation": self.incarnation.load(Ordering::Relaxed),
            "members": members,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_status_names_the_state_leader_epoch_and_last_contacts() {
        let addr = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
        let members = vec![(NodeId(3), addr(3)), (NodeId(1), addr(1)), (NodeId(2), addr(2))];
        let board = Board::new(NodeId(1), "bully", members, Leadership { leader: None, epoch: 0 });
        board.set_incarnation(4);
        board.contact(NodeId(3));
        board.contact(NodeId(99)); // Not a member: ignored.
        board.publish(State::Normal, Leadership { leader: Some(NodeId(3)), epoch: 1 << 32 | 3 });
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
        assert!(members[2]["last_contact_ms_ago"].as_u64().is_some_and(|ms| ms < 1000));
    }
}
