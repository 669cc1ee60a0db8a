//! The grader of elect: a student's program judged against a reference (a built-in algorithm or the teacher's own
//! program) on an assignment: simulated runs on hidden id arrangements at sizes up to thousands, and exhaustive
//! checks at small sizes. Each case passes or fails with the seed, the command that replays it and, from the
//! checker, a shortest counterexample ([`Case`]); the [`Report`] is written as text for people, JSON for scripts or
//! JUnit XML for autograders.
//!
//! ```
//! let assignment = elect_grade::Assignment::from_toml(
//!     "title = \"Chang-Roberts\"\nreference = \"chang-roberts\"\n[simulate]\nsizes = [8]\nbound = \"n*(n+1)/2 + n\"",
//! )
//! .unwrap();
//! assert!(elect_grade::grade(&assignment, "chang-roberts").unwrap().passed());
//! // LeLann's ring elects the same leader with n² messages: over the bound.
//! let lelann = elect_grade::grade(&assignment, "lelann").unwrap();
//! assert!(!lelann.passed());
//! assert!(lelann.cases[0].problems[0].ends_with("messages; the bound n*(n+1)/2 + n allows 44 at n=8"));
//! ```
//!
//! `elect grade` reads the assignment file and writes the report; everything between is here.

mod bound;
mod report;

use elect_scenario::{Ids, SimConfig, TopologyKind};
use serde::Deserialize;

pub use bound::Formula;
pub use report::{Case, Report};

/// Why an assignment cannot be graded: a problem of its file, or a reference that does not run.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The assignment is not valid TOML, or asks for what cannot be done (a field unknown, a size out of range, a
    /// bound that does not parse, an algorithm unknown); the message names the field.
    #[error("{0}")]
    Assignment(String),
    /// The reference failed to run at a size the assignment asks for.
    #[error("the reference at n={n}: {error}")]
    Reference {
        /// The size.
        n: usize,
        /// What went wrong.
        error: String,
    },
}

/// An assignment, as the teacher writes it (see `elect grade --help` for the file).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Assignment {
    title: String,
    reference: String,
    /// The topology; the reference's own by default.
    topology: Option<String>,
    #[serde(default)]
    simulate: Option<Simulate>,
    #[serde(default)]
    check: Option<Exhaustive>,
}

impl Assignment {
    /// The assignment a TOML text describes.
    pub fn from_toml(text: &str) -> Result<Self, Refusal> {
        toml::from_str(text).map_err(|e| Refusal::Assignment(e.to_string()))
    }

    /// The algorithm the students' runs are compared with, as the file names it.
    pub fn reference(&self) -> &str {
        &self.reference
    }

    /// How many cases it has: each simulated size in each arrangement, and each checked size.
    fn cases(&self) -> usize {
        let simulated = self.simulate.as_ref().map_or(0, |s| s.sizes.len() * s.arrangements as usize);
        simulated + self.check.as_ref().map_or(0, |c| c.sizes.len())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Simulate {
    sizes: Vec<usize>,
    #[serde(default = "one")]
    arrangements: u32,
    #[serde(default)]
    secret: u64,
    bound: Option<BoundSpec>,
    #[serde(default = "yes")]
    same_leader: bool,
    /// The reference's message counts, kind by kind, on every run.
    #[serde(default)]
    same_messages: bool,
}

/// The most messages a run may send: in all, or kind by kind.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum BoundSpec {
    Total(String),
    ByKind(std::collections::BTreeMap<String, String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Exhaustive {
    sizes: Vec<usize>,
    #[serde(default)]
    network: Option<String>,
    #[serde(default)]
    crashes: u8,
    #[serde(default)]
    secret: u64,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// Grades `program` (a built-in algorithm's name, or `exec:PROGRAM`) on `assignment`: its simulated cases, then its
/// exhaustive ones. A program that fails stops the grading at that case (the report says so).
pub fn grade(assignment: &Assignment, program: &str) -> Result<Report, Refusal> {
    let plan = Plan::new(assignment, program).map_err(Refusal::Assignment)?;
    let mut cases = Vec::new();
    plan.simulate(assignment, &mut cases)?;
    plan.check(assignment, &mut cases);
    Ok(Report {
        title: assignment.title.clone(),
        program: program.to_owned(),
        reference: assignment.reference.clone(),
        planned: assignment.cases(),
        cases,
    })
}

const MAX_SIM_NODES: usize = 4096;
const MAX_CHECK_NODES: usize = 8;
const MAX_ARRANGEMENTS: u32 = 1000;

/// What the assignment asks, checked.
struct Plan {
    program: String,
    reference: String,
    topology: Option<TopologyKind>,
    /// Formulas of n: for all messages (kind `None`), or for one kind.
    bounds: Vec<(Option<String>, Formula)>,
    network: elect_check::Network,
}

impl Plan {
    fn new(a: &Assignment, program: &str) -> Result<Self, String> {
        if a.cases() == 0 {
            return Err("it grades nothing: give [simulate], [check] or both".to_owned());
        }
        // Both must load: an unknown name or a program that does not start is bad input, not a failed case.
        elect_algos::lookup(&a.reference).map_err(|e| format!("reference: {e}"))?;
        elect_algos::lookup(program).map_err(|e| format!("--program: {e}"))?;
        let topology = a.topology.as_deref().map(str::parse).transpose().map_err(|e| format!("topology: {e}"))?;
        // A bound is a number of messages at every size simulated: infinite, it would pass every run.
        let sizes = a.simulate.as_ref().map_or(&[][..], |s| &s.sizes[..]);
        let bound = |field: &str, f: &str| {
            let formula = Formula::parse(f).map_err(|e| format!("{field}: {e}"))?;
            formula.finite_at(sizes.iter().map(|&n| n as u64)).map_err(|e| format!("{field}: {e}"))?;
            Ok::<_, String>(formula)
        };
        let bounds = match a.simulate.as_ref().and_then(|s| s.bound.as_ref()) {
            None => Vec::new(),
            Some(BoundSpec::Total(f)) => vec![(None, bound("simulate.bound", f)?)],
            Some(BoundSpec::ByKind(kinds)) => {
                let known = elect_algos::kinds(program).map_err(|e| e.to_string())?;
                let mut bounds = Vec::new();
                for (kind, f) in kinds {
                    if !known.contains(&kind.as_str()) {
                        return Err(format!(
                            "simulate.bound.{kind}: the program has no message kind {kind:?} (its kinds: {})",
                            known.join(", ")
                        ));
                    }
                    bounds.push((Some(kind.clone()), bound(&format!("simulate.bound.{kind}"), f)?));
                }
                bounds
            }
        };
        let network = a.check.as_ref().and_then(|c| c.network.as_deref()).unwrap_or("fifo");
        let network = network.parse().map_err(|e| format!("check.network: {e}"))?;
        if let Some(s) = &a.simulate {
            within("simulate.sizes", &s.sizes, MAX_SIM_NODES)?;
            if !(1..=MAX_ARRANGEMENTS).contains(&s.arrangements) {
                return Err(format!("simulate.arrangements: from 1 to {MAX_ARRANGEMENTS}"));
            }
        }
        if let Some(c) = &a.check {
            within("check.sizes", &c.sizes, MAX_CHECK_NODES)?;
            if c.crashes > 2 {
                return Err("check.crashes: at most 2".to_owned());
            }
        }
        Ok(Self {
            program: program.trim().to_owned(),
            reference: a.reference.trim().to_owned(),
            topology,
            bounds,
            network,
        })
    }

    fn config(&self, algorithm: &str, n: usize, seed: u64) -> SimConfig {
        let mut c = SimConfig::new(algorithm, n);
        c.topology = self.topology.clone();
        c.ids = Ids::Random;
        c.seed = seed;
        c
    }

    /// The simulated cases: each size, each hidden arrangement, the program beside the reference.
    fn simulate(&self, a: &Assignment, cases: &mut Vec<Case>) -> Result<(), Refusal> {
        let Some(s) = &a.simulate else { return Ok(()) };
        for &n in &s.sizes {
            for k in 1..=s.arrangements {
                let seed = hidden_seed(s.secret, n, k);
                let name = format!("simulate n={n}, arrangement {k}");
                let mine = self.config(&self.program, n, seed);
                if elect_algos::program::first_failure().is_some() {
                    return Ok(());
                }
                let mut case = Case::new(name, seed, mine.command_line());
                let reference = elect_sim::simulate(&self.config(&self.reference, n, seed), None)
                    .map_err(|e| Refusal::Reference { n, error: e.to_string() })?;
                match elect_sim::simulate(&mine, None) {
                    Err(e) => case.fail(e.to_string()),
                    Ok(report) => self.judge_run(&mut case, s, &report, &reference),
                }
                program_failed(&mut case);
                cases.push(case);
            }
        }
        Ok(())
    }

    fn judge_run(&self, case: &mut Case, s: &Simulate, mine: &elect_sim::Report, reference: &elect_sim::Report) {
        if let Some(v) = mine.properties.violations.first() {
            let at = v.node.map(|n| format!(" (process {n})")).unwrap_or_default();
            case.fail(format!("{} violated at t={}{at}: {}", v.property.name(), v.time, v.detail));
        } else if s.same_leader && mine.leader != reference.leader {
            let show = |l: Option<elect_core::NodeId>| l.map_or("none".to_owned(), |l| l.to_string());
            case.fail(format!("leader {}; the reference elects {}", show(mine.leader), show(reference.leader)));
        } else if s.same_messages && sent(mine) != sent(reference) {
            let show = |r| sent(r).iter().map(|(k, c)| format!("{k} {c}")).collect::<Vec<_>>().join(", ");
            case.fail(format!("messages {}; the reference sends {}", show(mine), show(reference)));
        } else {
            for (kind, bound) in &self.bounds {
                let most = bound.at(mine.nodes as u64);
                let (sent, what) = match kind {
                    Some(kind) => (mine.messages.kind(kind), format!("{kind} messages")),
                    None => (mine.messages.total, "messages".to_owned()),
                };
                if sent as f64 > most {
                    case.fail(format!("{sent} {what}; the bound {bound} allows {most} at n={}", mine.nodes));
                }
            }
        }
        case.note(format!(
            "{} messages, leader {}",
            mine.messages.total,
            mine.leader.map_or("none".to_owned(), |l| l.to_string())
        ));
    }

    /// The exhaustive cases: every interleaving at each small size, with the crashes asked.
    fn check(&self, a: &Assignment, cases: &mut Vec<Case>) {
        let Some(c) = &a.check else { return };
        for &n in &c.sizes {
            let seed = hidden_seed(c.secret, n, 0);
            let mut config = elect_check::CheckConfig::new(self.config(&self.program, n, seed));
            config.network = self.network;
            config.crashes = c.crashes;
            let sim_line = config.sim.command_line();
            let line = format!(
                "elect check{} --network {} --crashes {}",
                sim_line.strip_prefix("elect sim").unwrap_or(&sim_line),
                a.check.as_ref().and_then(|c| c.network.as_deref()).unwrap_or("fifo"),
                c.crashes
            );
            if elect_algos::program::first_failure().is_some() {
                return;
            }
            let mut case = Case::new(format!("check n={n}, every interleaving, {} crashes", c.crashes), seed, line);
            match elect_check::check(&config) {
                Err(e) => case.fail(e.to_string()),
                Ok(outcome) => judge_check(&mut case, &outcome),
            }
            program_failed(&mut case);
            cases.push(case);
        }
    }
}

/// The kinds a run sent, with how many of each.
fn sent(report: &elect_sim::Report) -> std::collections::BTreeMap<&'static str, u64> {
    report.messages.by_kind.iter().copied().filter(|&(_, c)| c > 0).collect()
}

fn judge_check(case: &mut Case, outcome: &elect_check::Outcome) {
    if let Some(c) = &outcome.counterexample {
        case.fail(format!("{} violated: {}", c.property, c.detail));
        case.counterexample = c.path.iter().map(ToString::to_string).collect();
    } else if !outcome.complete {
        case.fail(format!("the search stopped early ({}): not proven", outcome.stopped.unwrap_or("a limit")));
    } else if !outcome.ok() {
        case.fail("no path elects a leader".to_owned());
    }
    case.note(format!("{} states", outcome.states));
}

/// Marks `case` failed if the program failed in it: no case after it is run (the report says so).
fn program_failed(case: &mut Case) {
    if let Some(failure) = elect_algos::program::first_failure() {
        case.fail(format!("the program failed: {failure}"));
    }
}

fn within(what: &str, sizes: &[usize], max: usize) -> Result<(), String> {
    if sizes.is_empty() || sizes.len() > 64 {
        return Err(format!("{what}: from 1 to 64 sizes"));
    }
    match sizes.iter().find(|&&n| !(1..=max).contains(&n)) {
        Some(n) => Err(format!("{what}: {n} processes; from 1 to {max}")),
        None => Ok(()),
    }
}

/// The seed of arrangement `k` at size `n`, drawn from the teacher's secret by ChaCha (a cipher): students cannot
/// tune their program to the arrangements, and the seeds a report shows do not give the secret away, while its
/// commands still replay each case.
fn hidden_seed(secret: u64, n: usize, k: u32) -> u64 {
    use rand::{Rng, SeedableRng};
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&secret.to_le_bytes());
    key[8..16].copy_from_slice(&(n as u64).to_le_bytes());
    key[16..20].copy_from_slice(&k.to_le_bytes());
    // Seeds that a command line and a JSON number both keep exactly.
    rand_chacha::ChaCha8Rng::from_seed(key).next_u64() % (1 << 52)
}
