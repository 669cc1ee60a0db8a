#![doc = include_str!("../../../docs/reference/algorithms/chang-roberts.md")]

use std::str::FromStr;

use elect_core::{
    Check, Command, Cx, Duration, Epoch, Notice, Peers, Port, Process, Rank, Setup, Status, StatusKey, View, When,
    Winner,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
use crate::params::{ParamError, ParamInfo, Params};
use crate::{Learned, election_checks, ring_ports};

const BUG: ParamInfo = ParamInfo {
    name: "bug",
    values: "none|forward-smaller",
    default: "none",
    help: "forward-smaller: a deliberately broken variant that forwards weaker tokens (P-Unique and safety fail)",
};

/// The algorithm's configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChangRoberts {
    /// Run the deliberately broken variant that forwards weaker tokens.
    pub forward_smaller: bool,
}

/// A deliberately broken variant, selected with `bug=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bug {
    None,
    ForwardSmaller,
}

impl FromStr for Bug {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Self::None),
            "forward-smaller" => Ok(Self::ForwardSmaller),
            _ => Err(format!("unknown bug '{s}'")),
        }
    }
}

/// Chang–Roberts messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// A candidate travelling clockwise.
    Token {
        /// The candidate.
        id: Rank,
    },
    /// The winner, announced once around the ring.
    Elected {
        /// The winner.
        leader: Rank,
    },
}

elect_core::message_kinds!(
    Msg { Token => "token", Elected => "elected" },
    describe = Msg::text,
    wire_size = Msg::wire_size,
);

impl Msg {
    /// The variant's index (one byte) and the rank.
    fn wire_size(&self) -> u64 {
        match self {
            Self::Token { id: rank } | Self::Elected { leader: rank } => 1 + rank.wire_size(),
        }
    }

    /// `token 7`, `elected 9`.
    fn text(&self) -> String {
        match self {
            Self::Token { id } => format!("token {id}"),
            Self::Elected { leader } => format!("elected {leader}"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const SEND_OWN: &str = "send own token";
const RELAY: &str = "relay (not an initiator)";
const FORWARD: &str = "forward a stronger token";
const SWALLOW: &str = "swallow a weaker token";
const FORWARD_WEAKER: &str = "forward a weaker token (planted bug)";
const ELECTED: &str = "own token returned, elected";
const PASS_ON: &str = "pass the announcement on";
const CAME_HOME: &str = "announcement came home";
const AGAIN: &str = "ignore a second initiate";

/// Every message names a member by its rank.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        let (Self::Token { id: rank } | Self::Elected { leader: rank }) = self;
        roster.rank(*rank, "the id is not a member's")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    /// Has not initiated: relays everything.
    Relay,
    /// Initiated and still competing ("red" in S003).
    Candidate,
    /// Initiated, then saw a stronger token ("black").
    Lost,
    /// Its own token came back.
    Leader,
}

/// One process of Chang–Roberts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChangRobertsProcess {
    me: Rank,
    next: Port,
    role: Role,
    leader: Option<Rank>,
    forward_smaller: bool,
}

impl ChangRobertsProcess {
    #[inline(always)]
    fn on_token(&mut self, cx: &mut Cx<'_, Self>, id: Rank) {
        if self.role == Role::Relay {
            cx.rule(RELAY);
            cx.send(self.next, Msg::Token { id });
        } else if id == self.me {
            cx.rule(ELECTED);
            self.role = Role::Leader;
            cx.notify(Notice::Elected { epoch: Epoch::ZERO });
            cx.send(self.next, Msg::Elected { leader: self.me });
        } else if id > self.me {
            cx.rule(FORWARD);
            self.role = Role::Lost;
            cx.send(self.next, Msg::Token { id });
        } else if self.forward_smaller {
            cx.rule(FORWARD_WEAKER);
            cx.send(self.next, Msg::Token { id });
        } else {
            // A weaker token dies here, whether this initiator still competes or not.
            cx.rule(SWALLOW);
        }
    }
}

impl Process for ChangRobertsProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    // Inlined into the simulator's loop, always: a ring algorithm's every step is a message, and left to itself
    // the compiler kept this handler a call, which cost Chang-Roberts's worst case a tenth of its time.
    // Hirschberg-Sinclair's, larger, is left to the compiler: forced, it ran 3% slower on 2^20 processes.
    #[inline(always)]
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _from: Port, msg: Msg) {
        match msg {
            Msg::Token { id } => self.on_token(cx, id),
            Msg::Elected { leader } => {
                self.leader = Some(leader);
                if leader != self.me {
                    cx.rule(PASS_ON);
                    cx.send(self.next, Msg::Elected { leader });
                } else {
                    cx.rule(CAME_HOME);
                }
            }
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && self.role == Role::Relay {
            cx.rule(SEND_OWN);
            self.role = Role::Candidate;
            cx.send(self.next, Msg::Token { id: self.me });
        } else if cmd == Command::Initiate {
            cx.rule(AGAIN);
        }
    }

    /// `candidate: id 5`, `lost: id 5, leader 9`: the role the chapter names, its id and the leader it learned.
    fn view(&self, _: &Peers<'_>) -> View {
        let role = match self.role {
            Role::Relay => "relay",
            Role::Candidate => "candidate",
            Role::Lost => "lost",
            Role::Leader => "leader",
        };
        View::new(role).with("id", self.me).with_some("leader", self.leader.filter(|_| self.role != Role::Leader))
    }

    fn describe_timer((): &()) -> String {
        "no timer (it only waits for tokens)".to_owned()
    }

    fn status(&self) -> Status {
        self.status_key().status()
    }

    /// The leader learned, or whether this process takes part in an election: all its status depends on.
    #[inline(always)]
    fn status_key(&self) -> impl StatusKey + use<> {
        Learned { leader: self.leader, electing: self.role != Role::Relay }
    }
}

static INFO: Info = Info {
    name: "chang-roberts",
    aliases: &["cr"],
    title: "Chang-Roberts",
    model: "unidirectional ring, asynchronous reliable links, no failures during a run",
    seed: "S003 (Lynch's LCR)",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    links: LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[BUG],
    rules: &[SEND_OWN, RELAY, FORWARD, SWALLOW, FORWARD_WEAKER, ELECTED, PASS_ON, CAME_HOME, AGAIN],
    showcase: Showcase {
        initiators: Initiators::All,
        crash_strongest: false,
        describe: "random ids, every process initiates",
    },
};

impl Algorithm for ChangRoberts {
    type Process = ChangRobertsProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(Self { forward_smaller: params.value::<Bug>(&BUG)? == Bug::ForwardSmaller })
    }

    fn build(&self, setup: &Setup<'_>) -> ChangRobertsProcess {
        ChangRobertsProcess {
            me: setup.rank,
            next: ring_ports(setup).next,
            role: Role::Relay,
            leader: None,
            forward_smaller: self.forward_smaller,
        }
    }

    fn one_way(&self) -> bool {
        true
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn winner(&self) -> Winner {
        Winner::StrongestLiveInitiator
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // The winner's token goes round once, then the announcement; initiators may start up to n apart.
        t * (3 * facts.nodes)
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        token_bounds(f.nodes)
    }
}

/// The bounds of a ring where every token travels to the first stronger process: at most `n(n+1)/2` tokens
/// (descending ids), then `n` announcement messages. Chang-Roberts's, and LCR's in rounds.
pub(crate) fn token_bounds(n: u64) -> Vec<Bound> {
    vec![
        Bound {
            name: "worst case n(n+1)/2 tokens".into(),
            measure: Measure::Kinds(&["token"]),
            value: n * (n + 1) / 2,
        },
        Bound { name: "announcement n elected".into(), measure: Measure::Kinds(&["elected"]), value: n },
    ]
}

#[cfg(test)]
mod tests {
    use elect_core::{Event, Instant, Message, NodeId, Prefer, driver};

    use super::*;

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let mut p =
            ChangRobertsProcess { me: rank(5), next: Port(0), role: Role::Relay, leader: None, forward_smaller: false };
        let peers = Peers(&[]);
        let mut effects = Vec::new();
        assert_eq!(p.view(&peers).to_string(), "relay: id 5");
        let token = |id| Event::Message { from: Port(1), msg: Msg::Token { id: rank(id) } };
        assert_eq!(driver::handle(&mut p, Instant::ZERO, token(3), &mut effects), Some(RELAY));
        let initiate = Event::Command(Command::Initiate);
        assert_eq!(driver::handle(&mut p, Instant::ZERO, initiate.clone(), &mut effects), Some(SEND_OWN));
        assert_eq!(p.view(&peers).to_string(), "candidate: id 5");
        assert_eq!(driver::handle(&mut p, Instant::ZERO, initiate, &mut effects), Some(AGAIN));
        assert_eq!(driver::handle(&mut p, Instant::ZERO, token(3), &mut effects), Some(SWALLOW));
        assert_eq!(driver::handle(&mut p, Instant::ZERO, token(9), &mut effects), Some(FORWARD));
        assert_eq!(p.view(&peers).to_string(), "lost: id 5");
        let elected = Msg::Elected { leader: rank(9) };
        assert_eq!((Msg::Token { id: rank(9) }.describe(), elected.describe()), ("token 9".into(), "elected 9".into()));
        let announce = Event::Message { from: Port(1), msg: elected };
        assert_eq!(driver::handle(&mut p, Instant::ZERO, announce, &mut effects), Some(PASS_ON));
        assert_eq!(p.view(&peers).to_string(), "lost: id 5, leader 9");
        assert_eq!(ChangRobertsProcess::describe_timer(&()), "no timer (it only waits for tokens)");
    }

    #[test]
    fn its_own_token_elects_it_and_its_announcement_comes_home() {
        let mut p =
            ChangRobertsProcess { me: rank(9), next: Port(0), role: Role::Relay, leader: None, forward_smaller: true };
        let mut effects = Vec::new();
        let handle =
            |p: &mut ChangRobertsProcess, e, effects: &mut Vec<_>| driver::handle(p, Instant::ZERO, e, effects);
        assert_eq!(handle(&mut p, Event::Command(Command::Initiate), &mut effects), Some(SEND_OWN));
        let token = |id| Event::Message { from: Port(1), msg: Msg::Token { id: rank(id) } };
        assert_eq!(handle(&mut p, token(4), &mut effects), Some(FORWARD_WEAKER));
        assert_eq!(handle(&mut p, token(9), &mut effects), Some(ELECTED));
        let home = Event::Message { from: Port(1), msg: Msg::Elected { leader: rank(9) } };
        assert_eq!(handle(&mut p, home, &mut effects), Some(CAME_HOME));
        assert_eq!(p.view(&Peers(&[])).to_string(), "leader: id 9");
        assert_eq!(INFO.rules.len(), 9);
    }
}
