//! One history, three drivers. The simulator runs a member's process (`--monitor`) through a scripted history:
//! the start, deliveries in the order its constant delays give, timer firings, the leader's crash, its recovery
//! from what it made durable, its resignation, and its hand-over to the weakest member. That history, step by step,
//! is then fed to the checker's model and to the network runtime (`elect node`'s runner, on an in-memory network,
//! with its state files), and every step must send the same messages and leave the same statuses in all three.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use elect_check::{CheckConfig, Explorer, Step};
use elect_core::{Command, NodeId, Status};
use elect_net::NodeConfig;
use elect_net::scripted::{Datagram, Member, Net, Stepped};
use elect_scenario::{Delay, Monitor, NodeAt, SimConfig, TICKS_PER_UNIT, TopologyKind};
use serde_json::Value;

/// The simulator's trace, written to memory.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What happened in one step of the simulator's run.
#[derive(Clone, Debug)]
enum Input {
    Start(NodeId),
    Command(NodeId, Command),
    Deliver { from: NodeId, to: NodeId, id: u64, msg: Value },
    Drop { from: NodeId, to: NodeId, id: u64, msg: Value },
    Timer(NodeId, Value),
    Crash(NodeId),
    Recover(NodeId),
}

/// A message a step sent: its sender, recipient, number in the trace and JSON form.
#[derive(Clone, Debug, PartialEq)]
struct Send {
    from: NodeId,
    to: NodeId,
    id: u64,
    msg: Value,
}

/// One step of the history: the input at its time (in ticks), the messages it sent in order, and the statuses it
/// changed.
#[derive(Clone, Debug)]
struct Happened {
    t: u64,
    input: Input,
    sent: Vec<Send>,
    statuses: BTreeMap<NodeId, Value>,
}

impl Happened {
    /// Faults and commands after time 0 happen in the checker within a step of time passing.
    fn in_wait(&self) -> bool {
        self.t > 0 && matches!(self.input, Input::Crash(_) | Input::Recover(_) | Input::Command(..))
    }
}

const N: u32 = 3;
/// The faults, at instants when nothing else happens (the delay is one unit; timers run in whole units).
const CRASH: &str = "3@20.37";
const RECOVER: &str = "3@40.37";
const RESIGN: &str = "3@60.37";
const TRANSFER: &str = "3>1@85.37";
const UNTIL: u64 = 110;

fn config(algorithm: &str) -> SimConfig {
    let mut c = SimConfig::new(algorithm, N as usize);
    c.topology = Some(TopologyKind::Complete);
    c.delay = Delay::Constant(TICKS_PER_UNIT);
    c.monitor = Some(Monitor::member(elect_core::InT(2)));
    c.crashes.push(CRASH.parse::<NodeAt>().unwrap());
    c.recoveries.push(RECOVER.parse::<NodeAt>().unwrap());
    c.resigns.push(RESIGN.parse::<NodeAt>().unwrap());
    c.transfers.push(TRANSFER.parse().unwrap());
    c.until = Some(UNTIL * TICKS_PER_UNIT);
    c
}

fn ticks(v: &Value) -> u64 {
    (v.as_f64().expect("times are numbers") * TICKS_PER_UNIT as f64).round() as u64
}

fn node(v: &Value) -> NodeId {
    NodeId(u32::try_from(v.as_u64().expect("ids are numbers")).unwrap())
}

/// Runs the simulator and reads its trace into steps.
fn history(algorithm: &str) -> Vec<Happened> {
    let trace = Buffer::default();
    let report = elect_sim::simulate(&config(algorithm), Some(Box::new(trace.clone()))).unwrap();
    assert!(report.ok(), "{algorithm}: the history itself must hold: {}", report.reproduce);
    let text = String::from_utf8(trace.0.lock().unwrap().clone()).unwrap();
    let mut steps: Vec<Happened> = Vec::new();
    let mut msgs: BTreeMap<u64, Value> = BTreeMap::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let field = |k: &str| r.get(k).cloned().unwrap_or(Value::Null);
        let input = match r["ev"].as_str().unwrap() {
            "start" => Input::Start(node(&r["node"])),
            "command" => Input::Command(node(&r["node"]), serde_json::from_value(field("cmd")).unwrap()),
            "deliver" => Input::Deliver {
                from: node(&r["from"]),
                to: node(&r["node"]),
                id: r["id"].as_u64().unwrap(),
                msg: field("msg"),
            },
            "drop" => {
                let id = r["id"].as_u64().unwrap();
                Input::Drop { from: node(&r["from"]), to: node(&r["node"]), id, msg: msgs[&id].clone() }
            }
            "timer" => Input::Timer(node(&r["node"]), field("timer")),
            "crash" => Input::Crash(node(&r["node"])),
            "recover" => Input::Recover(node(&r["node"])),
            "send" => {
                let id = r["id"].as_u64().unwrap();
                msgs.insert(id, field("msg"));
                let send = Send { from: node(&r["node"]), to: node(&r["to"]), id, msg: field("msg") };
                steps.last_mut().expect("a send follows an input").sent.push(send);
                continue;
            }
            "status" => {
                let mut status = r.as_object().unwrap().clone();
                for k in ["ev", "t", "node"] {
                    status.remove(k);
                }
                let step = steps.last_mut().expect("a status follows an input");
                step.statuses.insert(node(&r["node"]), Value::Object(status));
                continue;
            }
            _ => continue,
        };
        steps.push(Happened { t: ticks(&r["t"]), input, sent: Vec::new(), statuses: BTreeMap::new() });
    }
    steps
}

fn json(status: Status) -> Value {
    serde_json::to_value(status).unwrap()
}

/// The messages as (from, to, message), sorted: the checker keeps messages in flight by link, not in sending order.
fn unordered(sent: impl IntoIterator<Item = (NodeId, NodeId, Value)>) -> Vec<(NodeId, NodeId, String)> {
    let mut all: Vec<_> = sent.into_iter().map(|(f, t, m)| (f, t, m.to_string())).collect();
    all.sort();
    all
}

/// Feeds the history to the checker's model: the steps at time 0 are its initial state, faults and commands
/// happen within a step of time passing, and every delivery, loss and timer is the enabled action that matches.
fn follow_in_the_checker(algorithm: &str, history: &[Happened]) {
    let mut check = CheckConfig::new(config(algorithm));
    check.timed = true;
    let mut explorer = Explorer::new(&check).unwrap();
    let initial: Vec<&Happened> = history.iter().take_while(|h| h.t == 0).collect();
    let mut expected: BTreeMap<NodeId, Value> = BTreeMap::new();
    for h in &initial {
        expected.extend(h.statuses.clone());
    }
    // The trace records a status when a step changes it: a process whose start left it as it was built has none
    // yet, and is compared from its first change on.
    let now: BTreeMap<NodeId, Value> = explorer
        .statuses()
        .into_iter()
        .filter(|(id, _)| expected.contains_key(id))
        .map(|(id, s)| (id, json(s)))
        .collect();
    assert_eq!(now, expected, "{algorithm}: the statuses after time 0");
    let mut k = initial.len();
    while k < history.len() {
        let h = &history[k];
        // A group: the faults and commands of one instant, or one input.
        let group: Vec<&Happened> =
            if h.in_wait() { history[k..].iter().take_while(|g| g.in_wait() && g.t == h.t).collect() } else { vec![h] };
        k += group.len();
        let at = |what: &str| format!("{algorithm}: {what} at {} ({:?})", h.t, h.input);
        // Time passes to the step's instant; steps of time on the way must do nothing.
        while explorer.now().0 < h.t {
            let wait = explorer.choices().into_iter().find(|c| matches!(c.step, Step::Wait { .. }));
            let wait = wait.unwrap_or_else(|| panic!("{}", at("time cannot pass")));
            let stepped = explorer.take(wait.action).unwrap();
            let reached = explorer.now().0;
            assert!(reached <= h.t, "{}", at(&format!("time passed to {reached}")));
            if reached == h.t && h.in_wait() {
                // The faults and commands of this instant happened within this step.
                let sent = group.iter().flat_map(|g| g.sent.iter().map(|s| (s.from, s.to, s.msg.clone())));
                let got = stepped.sent.iter().map(|s| (s.from, s.to, s.json.clone()));
                assert_eq!(unordered(got), unordered(sent), "{}", at("the messages sent"));
            } else {
                assert!(
                    stepped.sent.is_empty(),
                    "{}",
                    at(&format!("time passing to {reached} sent {:?}", stepped.sent))
                );
            }
        }
        if !h.in_wait() {
            let choices = explorer.choices();
            let wanted = |c: &&elect_check::Choice| match (&h.input, &c.step) {
                (Input::Deliver { from, to, msg, .. }, Step::Deliver { from: f, to: t, .. })
                | (Input::Drop { from, to, msg, .. }, Step::Lose { from: f, to: t, .. }) => {
                    from == f && to == t && c.detail.as_ref() == Some(msg)
                }
                (Input::Timer(node, timer), Step::Timer { node: n, .. }) => {
                    node == n && c.detail.as_ref() == Some(timer)
                }
                _ => false,
            };
            let choice = choices.iter().find(wanted).unwrap_or_else(|| {
                panic!(
                    "{}: not enabled; enabled: {:#?}",
                    at("the step"),
                    choices.iter().map(|c| &c.step).collect::<Vec<_>>()
                )
            });
            let stepped = explorer.take(choice.action).unwrap();
            let sent = h.sent.iter().map(|s| (s.from, s.to, s.msg.clone()));
            let got = stepped.sent.iter().map(|s| (s.from, s.to, s.json.clone()));
            assert_eq!(unordered(got), unordered(sent), "{}", at("the messages sent"));
        }
        for g in &group {
            expected.extend(g.statuses.clone());
        }
        for (id, status) in explorer.statuses() {
            if let Some(want) = expected.get(&id).filter(|_| status != Status::DOWN) {
                assert_eq!(&json(status), want, "{}", at(&format!("the status of {id}")));
            }
        }
    }
}

/// The runtime's configuration of member `id`, with the simulator's timing in runtime ticks (microseconds).
fn node_config(algorithm: &str, id: NodeId, dir: &std::path::Path) -> NodeConfig {
    let mut c = NodeConfig::new(id, Net::addr(id), algorithm, dir.join(id.0.to_string()));
    for peer in (1..=N).map(NodeId).filter(|&p| p != id) {
        c.peers.insert(peer, Net::addr(peer));
    }
    let unit = std::time::Duration::from_micros(TICKS_PER_UNIT);
    c.delay_bound = unit;
    c.heartbeat = elect_core::InT(2);
    c.resign_hold = unit * elect_algos::member::RESIGN_HOLD as u32;
    c.seed = Some(1);
    c
}

fn up<'a>(members: &'a mut BTreeMap<NodeId, Member>, id: &NodeId) -> &'a mut Member {
    members.get_mut(id).unwrap_or_else(|| panic!("member {id} is down"))
}

/// Feeds the history to the runtime: each member's runner, stepped by the script, on an in-memory network; a crash
/// drops a member, a recovery starts a new one on the same data directory.
fn follow_in_the_runtime(algorithm: &str, history: &[Happened]) {
    let dir = tempfile::tempdir().unwrap();
    let net = Net::new();
    let mut members: BTreeMap<NodeId, Member> = BTreeMap::new();
    let mut datagrams: BTreeMap<u64, Datagram> = BTreeMap::new();
    let mut expected: BTreeMap<NodeId, Value> = BTreeMap::new();
    for h in history {
        let at = |what: &str| format!("{algorithm}: {what} at {} ({:?})", h.t, h.input);
        let stepped: Option<(NodeId, Stepped)> = match &h.input {
            Input::Start(id) | Input::Recover(id) => {
                let (m, stepped) = Member::start(node_config(algorithm, *id, dir.path()), &net, h.t)
                    .unwrap_or_else(|e| panic!("{}: {e}", at("start")));
                members.insert(*id, m);
                Some((*id, stepped))
            }
            Input::Command(id, cmd) => Some((*id, up(&mut members, id).command(h.t, *cmd).unwrap())),
            Input::Deliver { to, id, .. } => {
                let datagram = &datagrams[id];
                Some((
                    *to,
                    up(&mut members, to).receive(h.t, datagram).unwrap_or_else(|e| panic!("{}: {e}", at("receive"))),
                ))
            }
            Input::Drop { to, id, .. } => {
                assert!(net.lose(*to, &datagrams[id]), "{}", at("the lost datagram is not on its way"));
                None
            }
            Input::Timer(id, timer) => {
                Some((*id, up(&mut members, id).fire(h.t, timer).unwrap_or_else(|e| panic!("{}: {e}", at("fire")))))
            }
            Input::Crash(id) => {
                members.remove(id);
                None
            }
        };
        expected.extend(h.statuses.clone());
        let Some((id, stepped)) = stepped else {
            assert!(h.sent.is_empty(), "{}", at("nothing runs, nothing is sent"));
            continue;
        };
        let got: Vec<(NodeId, &Value)> = stepped.sent.iter().map(|s| (s.to, &s.msg)).collect();
        let want: Vec<(NodeId, &Value)> = h.sent.iter().map(|s| (s.to, &s.msg)).collect();
        assert_eq!(got, want, "{}", at("the messages sent, in order"));
        for (s, sim) in stepped.sent.into_iter().zip(&h.sent) {
            datagrams.insert(sim.id, s.datagram);
        }
        if let Some(status) = expected.get(&id) {
            assert_eq!(&json(stepped.status), status, "{}", at("the status"));
        }
    }
}

fn conforms(algorithm: &str) {
    let history = history(algorithm);
    // The history holds what it is meant to: a crash, a recovery, a resignation, a transfer, and traffic in between.
    let count = |f: fn(&Input) -> bool| history.iter().filter(|h| f(&h.input)).count();
    assert_eq!(count(|i| matches!(i, Input::Crash(_))), 1);
    assert_eq!(count(|i| matches!(i, Input::Recover(_))), 1);
    assert_eq!(count(|i| matches!(i, Input::Command(_, Command::Resign))), 1);
    assert_eq!(count(|i| matches!(i, Input::Command(_, Command::Transfer { to: NodeId(1) }))), 1);
    assert!(count(|i| matches!(i, Input::Timer(..))) > 10, "{algorithm}: timers fire");
    assert!(count(|i| matches!(i, Input::Deliver { .. })) > 30, "{algorithm}: messages arrive");
    follow_in_the_checker(algorithm, &history);
    follow_in_the_runtime(algorithm, &history);
}

#[test]
fn bully_runs_alike_in_the_simulator_the_checker_and_the_runtime() {
    conforms("bully");
}

#[test]
fn garcia_molina_runs_alike_in_the_simulator_the_checker_and_the_runtime() {
    conforms("garcia-molina");
}

#[test]
fn invitation_runs_alike_in_the_simulator_the_checker_and_the_runtime() {
    conforms("invitation");
}

#[test]
fn chang_roberts_on_the_members_ring_runs_alike_in_the_simulator_the_checker_and_the_runtime() {
    conforms("chang-roberts");
}
