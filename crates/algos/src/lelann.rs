//! # van Steen's ring election (S000, which calls it "LeLann-Chang-Roberts")
//!
//! **Model.** A logical unidirectional ring; any process may start an election, several may run at once;
//! channels are asynchronous and reliable. (S000 also lets a process skip a dead successor; in this version the
//! ring has no failures during a run.)
//!
//! **Messages.** `election{initiator, ids}` goes once around the ring and collects every id it passes;
//! `coordinator{initiator, leader, members}` goes once around with the result and the membership list.
//!
//! **Rules.** An initiator sends `election{me, [me]}`. Others append their id and forward. When its election
//! comes back, the initiator picks the strongest id as leader and sends `coordinator`; every other process adopts
//! the leader and the member list and forwards it; the initiator drops it when it comes back (the announcement
//! stops at the initiator, as DESIGN.md decides).
//!
//! **Guarantees.** Every process ends knowing the strongest process as leader and the full member list, whatever
//! the number of concurrent elections (they all compute the same maximum). When the membership changes during
//! concurrent elections (a process crashes or recovers) they can announce different leaders; a process keeps the
//! strongest leader announced to it.
//!
//! **Cost.** Exactly `2·L` messages per initiator on a ring of `L` live processes (S000: "always 2N", best = worst),
//! `2k·L` for `k` concurrent initiators. Messages grow to `L` ids, so the bit complexity is Θ(L²) per election.

use elect_core::{Check, Command, Cx, Duration, NodeId, Port, Process, Rank, Setup, Status, When};
use serde::{Deserialize, Serialize};

use crate::params::{ParamError, Params};
use crate::registry::{Algorithm, Bound, Facts, Info, Initiators, Measure, Needs, Showcase, Timing};
use crate::{election_checks, ring_ports};

/// The algorithm's configuration (it has no parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeLann;

/// van Steen ring messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// Collects the ids of the ring, starting at `initiator`.
    Election {
        /// Who started this election.
        initiator: Rank,
        /// The processes passed so far, in ring order.
        ids: Vec<Rank>,
    },
    /// Announces the result of `initiator`'s election.
    Coordinator {
        /// Who started the election.
        initiator: Rank,
        /// The strongest id collected.
        leader: Rank,
        /// Every process of the ring, in ring order from the initiator.
        members: Vec<Rank>,
    },
}

elect_core::message_kinds!(Msg { Election => "election", Coordinator => "coordinator" });

/// One process of van Steen's ring election.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    me: Rank,
    next: Port,
    initiated: bool,
    involved: bool,
    leader: Option<Rank>,
    members: Vec<Rank>,
}

impl Node {
    /// The member list learned from the last announcement, in ring order from its initiator.
    pub fn members(&self) -> Vec<NodeId> {
        self.members.iter().map(|r| r.id()).collect()
    }
}

impl Process for Node {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _from: Port, msg: Msg) {
        match msg {
            Msg::Election { initiator, ids } if initiator == self.me => {
                let leader = *ids.iter().max().expect("an election carries at least its initiator");
                if self.leader.is_none_or(|l| leader >= l) {
                    self.leader = Some(leader);
                    self.members.clone_from(&ids);
                }
                cx.send(self.next, Msg::Coordinator { initiator, leader, members: ids });
            }
            Msg::Election { initiator, mut ids } => {
                self.involved = true;
                ids.push(self.me);
                cx.send(self.next, Msg::Election { initiator, ids });
            }
            Msg::Coordinator { initiator, .. } if initiator == self.me => {} // It has gone round once.
            Msg::Coordinator { initiator, leader, members } => {
                // Concurrent elections over a changing membership can announce different leaders: keep the
                // strongest announced (ALGORITHMS.md §3.1).
                if self.leader.is_none_or(|l| leader >= l) {
                    self.leader = Some(leader);
                    self.members.clone_from(&members);
                }
                cx.send(self.next, Msg::Coordinator { initiator, leader, members });
            }
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && !self.initiated {
            self.initiated = true;
            self.involved = true;
            cx.send(self.next, Msg::Election { initiator: self.me, ids: vec![self.me] });
        }
    }

    fn status(&self) -> Status {
        match self.leader {
            Some(leader) => Status::normal(Some(leader.id()), 0),
            None if self.involved => Status::election(0),
            None => Status::normal(None, 0),
        }
    }
}

static INFO: Info = Info {
    name: "lelann",
    aliases: &["van-steen"],
    title: "van Steen's ring (S000's LeLann-Chang-Roberts)",
    model: "logical unidirectional ring, asynchronous reliable links, concurrent elections allowed",
    seed: "S000",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    params: &[],
    showcase: Showcase {
        initiators: Initiators::OneRandom,
        crash_strongest: false,
        describe: "random ids, one initiator",
    },
};

impl Algorithm for LeLann {
    type Process = Node;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> Node {
        Node {
            me: setup.rank,
            next: ring_ports(setup).next,
            initiated: false,
            involved: false,
            leader: None,
            members: Vec::new(),
        }
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, false)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // The election message goes round once, then the announcement.
        t * (2 * facts.nodes)
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        vec![Bound { name: "2kL messages".into(), measure: Measure::Messages, value: 2 * f.initiators * f.live }]
    }
}
