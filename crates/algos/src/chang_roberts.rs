#![doc = include_str!("../../../docs/reference/algorithms/chang-roberts.md")]

use std::str::FromStr;

use elect_core::{Check, Command, Cx, Duration, Notice, Port, Process, Rank, Setup, Status, StatusKey, When, Winner};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Measure, Needs, Showcase, Timing};
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

elect_core::message_kinds!(Msg { Token => "token", Elected => "elected" });

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
    #[inline]
    fn on_token(&mut self, cx: &mut Cx<'_, Self>, id: Rank) {
        if self.role == Role::Relay {
            cx.send(self.next, Msg::Token { id });
        } else if id == self.me {
            self.role = Role::Leader;
            cx.notify(Notice::Elected { epoch: 0 });
            cx.send(self.next, Msg::Elected { leader: self.me });
        } else if id > self.me {
            self.role = Role::Lost;
            cx.send(self.next, Msg::Token { id });
        } else if self.forward_smaller {
            cx.send(self.next, Msg::Token { id });
        }
        // Otherwise a weaker token dies here, whether this initiator still competes or not.
    }
}

impl Process for ChangRobertsProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    // Inlined into the simulator's loop: a ring algorithm's every step is a message.
    #[inline]
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _from: Port, msg: Msg) {
        match msg {
            Msg::Token { id } => self.on_token(cx, id),
            Msg::Elected { leader } => {
                self.leader = Some(leader);
                if leader != self.me {
                    cx.send(self.next, Msg::Elected { leader });
                }
            }
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && self.role == Role::Relay {
            self.role = Role::Candidate;
            cx.send(self.next, Msg::Token { id: self.me });
        }
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
    aliases: &["cr", "lcr"],
    title: "Chang-Roberts",
    model: "unidirectional ring, asynchronous reliable links, no failures during a run",
    seed: "S003 (Lynch's LCR)",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[BUG],
    rules: &[],
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
