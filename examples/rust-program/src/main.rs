//! An election algorithm of one's own, in Rust: Chang-Roberts on a one-way ring, written against elect's
//! interfaces (a `Process` for one process, an `Algorithm` that builds them and says what they promise), and run
//! by the whole elect command line under the name `my-chang-roberts`:
//!
//! ```sh
//! cargo run -p elect-example-program -- sim -a my-chang-roberts -n 8 --ids random
//! cargo run -p elect-example-program -- check -a my-chang-roberts -n 5
//! ```
//!
//! Every command of `elect` works (`sim`, `check`, `sweep`, `grade`, `serve`, `node`), and so do the built-in
//! algorithms, for comparison.

use std::process::ExitCode;

use elect::algos::program::Native;
use elect::algos::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, ParamError, Params, Showcase, Timing,
};
use elect::core::{
    Check, Command, Cx, Duration, Epoch, Invalid, NodeId, Peers, Port, Process, Roster, Setup, State, Status, Validate,
    View, When,
};
use serde::{Deserialize, Serialize};

/// A message: a token carrying an id round the ring, or the winner's announcement.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
enum Msg {
    Token { id: u32 },
    Elected { leader: u32 },
}

elect::core::message_kinds!(Msg { Token => "token", Elected => "elected" }, describe = Msg::text);

impl Msg {
    fn text(&self) -> String {
        match self {
            Self::Token { id } => format!("token {id}"),
            Self::Elected { leader } => format!("elected {leader}"),
        }
    }
}

/// Ids on the wire are checked where they enter: here, any id will do.
impl Validate for Msg {
    fn validate(&self, _: &Roster<'_>) -> Result<(), Invalid> {
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
enum Role {
    Relay,
    Candidate,
    Lost,
    Leader,
}

/// One process: its id, the port to its successor, its role and the leader it learned.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Ring {
    me: u32,
    next: u32,
    role: Role,
    leader: Option<u32>,
}

impl Ring {
    fn send(&self, cx: &mut Cx<'_, Self>, msg: Msg) {
        cx.send(Port(self.next), msg);
    }
}

impl Process for Ring {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate && self.role == Role::Relay {
            self.role = Role::Candidate;
            cx.rule("send own token");
            self.send(cx, Msg::Token { id: self.me });
        }
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _: Port, msg: Msg) {
        match msg {
            Msg::Token { id } if self.role == Role::Relay => {
                cx.rule("relay");
                self.send(cx, Msg::Token { id });
            }
            Msg::Token { id } if id == self.me => {
                self.role = Role::Leader;
                cx.rule("own token returned, elected");
                cx.notify(elect::core::Notice::Elected { epoch: Epoch::ZERO });
                self.send(cx, Msg::Elected { leader: self.me });
            }
            Msg::Token { id } if id > self.me => {
                self.role = Role::Lost;
                cx.rule("forward a stronger token");
                self.send(cx, Msg::Token { id });
            }
            Msg::Token { .. } => cx.rule("swallow a weaker token"),
            Msg::Elected { leader } => {
                self.leader = Some(leader);
                if leader == self.me {
                    cx.rule("announcement came home");
                } else {
                    cx.rule("pass the announcement on");
                    self.send(cx, Msg::Elected { leader });
                }
            }
        }
    }

    fn on_timer(&mut self, _: &mut Cx<'_, Self>, (): ()) {}

    fn status(&self) -> Status {
        match self.leader {
            Some(l) => Status::normal(Some(NodeId(l)), Epoch::ZERO),
            None if self.role != Role::Relay => Status { state: State::Election, ..Status::normal(None, Epoch::ZERO) },
            None => Status::normal(None, Epoch::ZERO),
        }
    }

    fn view(&self, _: &Peers<'_>) -> View {
        let role = match self.role {
            Role::Relay => "relay",
            Role::Candidate => "candidate",
            Role::Lost => "lost",
            Role::Leader => "leader",
        };
        View::new(role).with("id", self.me)
    }
}

/// The algorithm: builds each process from what the driver tells it, and says what a run must show.
#[derive(Clone, Debug)]
struct ChangRoberts;

static INFO: Info = Info {
    name: "my-chang-roberts",
    aliases: &[],
    title: "Chang-Roberts, in Rust",
    model: "unidirectional ring, asynchronous reliable links",
    seed: "",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    links: LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[
        "send own token",
        "relay",
        "forward a stronger token",
        "swallow a weaker token",
        "own token returned, elected",
        "pass the announcement on",
        "announcement came home",
    ],
    showcase: Showcase { initiators: Initiators::All, crash_strongest: false, describe: "every process initiates" },
};

impl Algorithm for ChangRoberts {
    type Process = Ring;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> Ring {
        let next = setup.ring.expect("a ring algorithm runs on a ring").next.0;
        Ring { me: setup.id.0, next, role: Role::Relay, leader: None }
    }

    fn checks(&self) -> Vec<Check> {
        elect::algos::election_checks(When::Always, true)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        t * (3 * facts.nodes)
    }

    /// The textbook's counts: at most n(n+1)/2 tokens (ids descending round the ring), then n announcements.
    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        let n = facts.nodes;
        vec![
            Bound {
                name: "worst case n(n+1)/2 tokens".into(),
                measure: Measure::Kinds(&["token"]),
                value: n * (n + 1) / 2,
            },
            Bound { name: "announcement n elected".into(), measure: Measure::Kinds(&["elected"]), value: n },
        ]
    }
}

fn main() -> ExitCode {
    match Native::new(ChangRoberts, "my-chang-roberts", &[]) {
        Ok(native) => elect::main_with(vec![("my-chang-roberts".to_owned(), Box::new(native))]),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
