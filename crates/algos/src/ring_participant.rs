#![doc = include_str!("../../../docs/reference/algorithms/ring-participant.md")]

use elect_core::{Check, Command, Cx, Duration, Notice, Port, Process, Rank, Setup, Status, When};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Measure, Needs, Showcase, Timing};
use crate::params::{ParamError, Params};
use crate::{election_checks, ring_ports};

/// The algorithm's configuration (it has no parameters; keys come from the run's ranking).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingParticipant;

/// Participating-flag ring messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// The best key seen on this pass.
    Election {
        /// The key.
        key: Rank,
    },
    /// The winner.
    Elected {
        /// The winner's key.
        key: Rank,
    },
}

elect_core::message_kinds!(Msg { Election => "election", Elected => "elected" });

/// Every message names a member by its rank.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        let (Self::Election { key } | Self::Elected { key }) = self;
        roster.rank(*key, "the key is not a member's")
    }
}

/// One process of the participating-flag ring.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RingParticipantProcess {
    me: Rank,
    next: Port,
    participating: bool,
    leader: Option<Rank>,
}

impl RingParticipantProcess {
    fn participate(&mut self, cx: &mut Cx<'_, Self>) {
        self.participating = true;
        cx.send(self.next, Msg::Election { key: self.me });
    }
}

impl Process for RingParticipantProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _from: Port, msg: Msg) {
        match msg {
            Msg::Election { key } if key > self.me => {
                self.participating = true;
                cx.send(self.next, Msg::Election { key });
            }
            Msg::Election { key } if key < self.me => {
                if !self.participating {
                    self.participate(cx);
                }
            }
            Msg::Election { .. } => {
                self.participating = false;
                self.leader = Some(self.me);
                cx.notify(Notice::Elected { epoch: 0 });
                cx.send(self.next, Msg::Elected { key: self.me });
            }
            Msg::Elected { key } => {
                self.participating = false;
                self.leader = Some(key);
                if key != self.me {
                    cx.send(self.next, Msg::Elected { key });
                }
            }
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && !self.participating {
            self.participate(cx);
        }
    }

    fn status(&self) -> Status {
        match self.leader {
            _ if self.participating => Status::election(0),
            Some(leader) => Status::normal(Some(leader.id()), 0),
            None => Status::normal(None, 0),
        }
    }
}

static INFO: Info = Info {
    name: "ring-participant",
    aliases: &["participant", "s001-ring"],
    title: "Ring with participating flag",
    model: "unidirectional ring, (attr, id) keys, asynchronous reliable FIFO links, no failures during a run",
    seed: "S001",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[],
    showcase: Showcase {
        initiators: Initiators::OneRandom,
        crash_strongest: false,
        describe: "random ids, one initiator",
    },
};

impl Algorithm for RingParticipant {
    type Process = RingParticipantProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> RingParticipantProcess {
        RingParticipantProcess { me: setup.rank, next: ring_ports(setup).next, participating: false, leader: None }
    }

    fn one_way(&self) -> bool {
        true
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // One initiator d hops upstream of the winner: 2n + d messages in a row.
        t * (3 * facts.nodes)
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        let n = f.nodes;
        if f.initiators <= 1 {
            vec![Bound { name: "one initiator: at most 3n-1".into(), measure: Measure::Messages, value: 3 * n - 1 }]
        } else {
            let value = n * (n + 1) / 2 + n;
            vec![Bound { name: "n(n+1)/2 + n".into(), measure: Measure::Messages, value }]
        }
    }
}
