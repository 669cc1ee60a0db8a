#![doc = include_str!("../../../docs/reference/algorithms/ring-participant.md")]

use elect_core::{Check, Command, Cx, Duration, Epoch, Notice, Peers, Port, Process, Rank, Setup, Status, View, When};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
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

elect_core::message_kinds!(
    Msg { Election => "election", Elected => "elected" },
    describe = Msg::text,
    wire_size = Msg::wire_size,
);

impl Msg {
    /// The variant's index (one byte) and the key.
    fn wire_size(&self) -> u64 {
        match *self {
            Self::Election { key } | Self::Elected { key } => 1 + key.wire_size(),
        }
    }

    /// `election 7`, `elected 9`.
    fn text(&self) -> String {
        match self {
            Self::Election { key } => format!("election {key}"),
            Self::Elected { key } => format!("elected {key}"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const SEND_OWN: &str = "send own key";
const FORWARD: &str = "forward a stronger key";
const REPLACE: &str = "replace a weaker key with own";
const SWALLOW: &str = "swallow a weaker key";
const ELECTED: &str = "own key returned, elected";
const PASS_ON: &str = "pass the announcement on";
const CAME_HOME: &str = "announcement came home";
const AGAIN: &str = "ignore initiate (already participating)";

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
                cx.rule(FORWARD);
                self.participating = true;
                cx.send(self.next, Msg::Election { key });
            }
            Msg::Election { key } if key < self.me => {
                if !self.participating {
                    cx.rule(REPLACE);
                    self.participate(cx);
                } else {
                    cx.rule(SWALLOW);
                }
            }
            Msg::Election { .. } => {
                cx.rule(ELECTED);
                self.participating = false;
                self.leader = Some(self.me);
                cx.notify(Notice::Elected { epoch: Epoch::ZERO });
                cx.send(self.next, Msg::Elected { key: self.me });
            }
            Msg::Elected { key } => {
                self.participating = false;
                self.leader = Some(key);
                if key != self.me {
                    cx.rule(PASS_ON);
                    cx.send(self.next, Msg::Elected { key });
                } else {
                    cx.rule(CAME_HOME);
                }
            }
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && !self.participating {
            cx.rule(SEND_OWN);
            self.participate(cx);
        } else if cmd == Command::Initiate {
            cx.rule(AGAIN);
        }
    }

    /// `participating: key 5`, `not participating: key 5, leader 9`: the participating flag, its key and the
    /// leader it learned.
    fn view(&self, _: &Peers<'_>) -> View {
        let role = if self.participating { "participating" } else { "not participating" };
        View::new(role).with("key", self.me).with_some("leader", self.leader)
    }

    fn describe_timer((): &()) -> String {
        "no timer (it only waits for messages)".to_owned()
    }

    fn status(&self) -> Status {
        match self.leader {
            _ if self.participating => Status::election(Epoch::ZERO),
            Some(leader) => Status::normal(Some(leader.id()), Epoch::ZERO),
            None => Status::normal(None, Epoch::ZERO),
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
    links: LinkOrder::Fifo,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[SEND_OWN, FORWARD, REPLACE, SWALLOW, ELECTED, PASS_ON, CAME_HOME, AGAIN],
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

#[cfg(test)]
mod tests {
    use elect_core::{Event, Instant, Message, NodeId, Prefer, driver};

    use super::*;

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    fn election(key: u32) -> Event<Msg, (), ()> {
        Event::Message { from: Port(1), msg: Msg::Election { key: rank(key) } }
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let mut p = RingParticipantProcess { me: rank(5), next: Port(0), participating: false, leader: None };
        let peers = Peers(&[]);
        let mut effects = Vec::new();
        assert_eq!(p.view(&peers).to_string(), "not participating: key 5");
        assert_eq!(driver::handle(&mut p, Instant::ZERO, election(3), &mut effects), Some(REPLACE));
        assert_eq!(p.view(&peers).to_string(), "participating: key 5");
        assert_eq!(effects.len(), 1, "it sends its own key in place of the weaker one");
        assert_eq!(driver::handle(&mut p, Instant::ZERO, election(3), &mut effects), Some(SWALLOW));
        assert_eq!(driver::handle(&mut p, Instant::ZERO, election(9), &mut effects), Some(FORWARD));
        let initiate = Event::Command(Command::Initiate);
        assert_eq!(driver::handle(&mut p, Instant::ZERO, initiate, &mut effects), Some(AGAIN));
        let elected = Msg::Elected { key: rank(9) };
        assert_eq!(
            (Msg::Election { key: rank(9) }.describe(), elected.describe()),
            ("election 9".into(), "elected 9".into())
        );
        let announce = Event::Message { from: Port(1), msg: elected };
        assert_eq!(driver::handle(&mut p, Instant::ZERO, announce, &mut effects), Some(PASS_ON));
        assert_eq!(p.view(&peers).to_string(), "not participating: key 5, leader 9");
        let keyed = Rank::new(Prefer::Highest, 2, NodeId(4));
        assert_eq!(Msg::Election { key: keyed }.describe(), "election (2, 4)");
    }

    #[test]
    fn its_own_key_elects_it_and_its_announcement_comes_home() {
        let mut p = RingParticipantProcess { me: rank(9), next: Port(0), participating: false, leader: None };
        let mut effects = Vec::new();
        let initiate = Event::Command(Command::Initiate);
        assert_eq!(driver::handle(&mut p, Instant::ZERO, initiate, &mut effects), Some(SEND_OWN));
        assert_eq!(driver::handle(&mut p, Instant::ZERO, election(9), &mut effects), Some(ELECTED));
        let home = Event::Message { from: Port(1), msg: Msg::Elected { key: rank(9) } };
        assert_eq!(driver::handle(&mut p, Instant::ZERO, home, &mut effects), Some(CAME_HOME));
        assert_eq!(p.view(&Peers(&[])).to_string(), "not participating: key 9, leader 9");
    }
}
