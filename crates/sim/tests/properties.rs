//! The property checker catches broken algorithms, whether registered or written in a test.

mod common;

use elect_algos::{Algorithm, Bound, Facts, Info, Initiators, Needs, ParamError, Params, Showcase, Timing};
use elect_core::{Check, Command, Cx, Epoch, Message, Notice, Port, Process, Property, Rank, Setup, Status};
use elect_scenario::{Scenario, SimConfig};
use elect_sim::Sim;
use serde::{Deserialize, Serialize};

/// A ring algorithm that is deliberately wrong: every initiator declares itself leader and tells its successor,
/// who believes it.
#[derive(Clone, Debug, Default)]
struct Braggart;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Node {
    me: Rank,
    next: Port,
    leader: Option<Rank>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Boast(Rank);

impl elect_core::Validate for Boast {
    fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        Ok(())
    }
}

impl Message for Boast {
    fn kinds() -> std::borrow::Cow<'static, [&'static str]> {
        std::borrow::Cow::Borrowed(&["boast"])
    }
    fn kind_index(&self) -> usize {
        0
    }
    fn kind(&self) -> &'static str {
        "boast"
    }
}

impl Process for Node {
    type Msg = Boast;
    type Timer = ();
    type Durable = ();
    fn on_message(&mut self, _: &mut Cx<'_, Self>, _: Port, msg: Boast) {
        self.leader = Some(msg.0);
    }
    fn on_command(&mut self, cx: &mut Cx<'_, Self>, _: Command) {
        self.leader = Some(self.me);
        cx.notify(Notice::Elected { epoch: Epoch::ZERO });
        cx.send(self.next, Boast(self.me));
    }
    fn status(&self) -> Status {
        Status::normal(self.leader.map(Rank::id), Epoch::ZERO)
    }
}

static INFO: Info = Info {
    name: "chang-roberts",
    aliases: &[],
    title: "braggart",
    model: "a ring",
    seed: "none",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    links: elect_algos::LinkOrder::Any,
    elects: elect_algos::Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[],
    showcase: Showcase { initiators: Initiators::All, crash_strongest: false, describe: "" },
};

impl Algorithm for Braggart {
    type Process = Node;
    const INFO: &'static Info = &INFO;
    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }
    fn build(&self, setup: &Setup<'_>) -> Node {
        Node { me: setup.rank, next: setup.ring.unwrap().next, leader: None }
    }
    fn checks(&self) -> Vec<Check> {
        vec![Check::always(Property::Safety), Check::always(Property::Uniqueness), Check::at_end(Property::Agreement)]
    }
    fn election_time(&self, facts: &Facts, t: elect_core::Duration) -> elect_core::Duration {
        t * facts.nodes
    }
    fn bounds(&self, _: &Facts) -> Vec<Bound> {
        Vec::new()
    }
}

#[test]
fn a_broken_algorithm_violates_safety_at_the_first_wrong_step() {
    let mut cfg = SimConfig::new("chang-roberts", 5);
    cfg.seed = 99;
    let mut sim = Sim::new(Braggart, Scenario::build(&cfg).unwrap());
    sim.run().unwrap();
    let r = sim.report();
    let violated: Vec<Property> = r.properties.violations.iter().map(|v| v.property).collect();
    assert_eq!(violated, [Property::Safety, Property::Uniqueness, Property::Agreement]);
    let safety = &r.properties.violations[0];
    assert_eq!(safety.time.ticks(), 0, "the first initiator's boast is caught at once");
    assert_eq!(safety.detail, "node 1 elected 1 but the expected winner is 5");
    assert!(r.reproduce.contains("--seed 99"));
}
