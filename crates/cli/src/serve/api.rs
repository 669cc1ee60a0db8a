//! `GET /api/sim`, `/api/check` and `/api/sweep`: the flags as query parameters, read into the subcommand's own
//! flags struct (one request type per endpoint: `SimArgs`, `CheckArgs`, `SweepArgs`; see `query::request`), run
//! through the code `elect sim --json` and `elect check --json` run, under the server's [`Caps`].
//!
//! How each limit is held: the processes by the command line's own `--max-nodes`, set to the server's; events by
//! running with `--max-events` at the server's limit when the request asked for more (a run that reaches it gets
//! 400, and one that ends before it is the run the request asked for, reported with the request's command); a
//! check's states, seconds and memory likewise, by the checker's bounds (a search they cut short gets 400 if the
//! request asked for more, and the partial verdict if it asked for that bound itself); a simulation's and a sweep's
//! seconds by a [`Watch`] their progress callback (and a traced run's trace) looks at, which abandons the run by
//! unwinding (caught in `serve.rs`).

use std::any::Any;
use std::io::Write;
use std::time::Instant;

use elect_scenario::{Ids, SimConfig};
use elect_sim::{Report, Row, SimError, Streamed, Sweep};
use elect_viz::Labels;
use serde_json::{Value, json};

use super::answer::{Answer, Caps, cancel_flag};
use super::query::{self, Request};
use crate::{check, flag_text, limits, sim, sweep};

/// The most processes `--every-arrangement` takes here (one check per arrangement of the ids).
const MAX_ARRANGED: usize = 5;

/// Why a run was abandoned before its end (the payload of the unwinding that abandons it).
#[derive(Debug)]
pub(crate) struct Abandoned;

/// Lets [`Abandoned`] unwind without a message on standard error; any other panic is reported as before.
pub(crate) fn quiet_aborts() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<Abandoned>().is_none() {
            previous(info);
        }
    }));
}

/// The answer to a request whose work panicked.
pub(crate) fn panicked(payload: &(dyn Any + Send), caps: &Caps) -> Answer {
    if payload.downcast_ref::<Abandoned>().is_some() {
        return Answer::bad(over_time(caps));
    }
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned());
    Answer::error(hyper::StatusCode::INTERNAL_SERVER_ERROR, format!("internal error: {what}"))
}

/// The message for a request that passed the time limit.
pub(crate) fn over_time(caps: &Caps) -> String {
    format!(
        "over the limit of {} seconds per request (elect serve --max-seconds raises it); ask for a smaller run",
        caps.seconds
    )
}

/// `GET /api/rules?algorithm=NAME`: the rules a run of the algorithm may name, each with the sentence of the book
/// that states it and the chapter it is in (the chapters are compiled in).
pub(crate) fn rules(query: &str) -> Answer {
    let pairs = match query::pairs(query) {
        Ok(pairs) => pairs,
        Err(e) => return Answer::bad(e),
    };
    let Some((_, name)) = pairs.iter().find(|(k, _)| k == "algorithm") else {
        return Answer::bad("rules: give ?algorithm=NAME");
    };
    match elect_algos::lookup(name) {
        Ok(info) => Answer::value(&json!({ "algorithm": info.name, "rules": elect_algos::book::rules(info.name) })),
        Err(e) => Answer::bad(format!("rules: {e}")),
    }
}

/// The limits, for the page.
pub(crate) fn limits_json(caps: &Caps, at_once: usize) -> Value {
    json!({
        "nodes": caps.sim_nodes,
        "check_nodes": caps.check_nodes,
        "events": caps.events,
        "states": caps.states,
        "memory": caps.memory,
        "seconds": caps.seconds,
        "runs": caps.runs,
        "requests": at_once,
        "files": caps.allow_files,
        "programs": elect_algos::program::loaded_names(),
    })
}

/// An error from the command's own code, worded as the command line prints it.
fn cli_error(e: &anyhow::Error) -> Answer {
    Answer::bad(format!("error: {}", e.chain().map(ToString::to_string).collect::<Vec<_>>().join(": ")))
}

/// Refuses `flag` set by the request above the server's `cap`; `unit` names what it counts.
fn at_most<T: PartialOrd + Copy + std::fmt::Display>(
    requested: Option<T>,
    cap: T,
    flag: &str,
    unit: &str,
) -> Result<(), Answer> {
    match requested {
        Some(r) if r > cap => Err(Answer::bad(format!(
            "--{flag} {} is more than this server's limit of {cap} {unit} (elect serve --{flag} raises it)",
            elect_scenario::shorten(&r.to_string())
        ))),
        _ => Ok(()),
    }
}

/// The request's own value of a flag, if it gave one (`id` the flag's id, `value` the parsed one).
fn own<A, T: Copy>(request: &Request<A>, id: &str, value: T) -> Option<T> {
    request.gave(id).then_some(value)
}

/// Refuses a query that gives the server's limits' flags above its limits, and the processes above its limit
/// (the cheap cases, with a message naming the server's flag; the command's own `--max-nodes` catches the rest).
fn nodes_first(pairs: &[(String, String)], cap: usize, flag: &str) -> Result<(), Answer> {
    for (k, v) in pairs {
        if k == "nodes" {
            if let Ok(n) = v.trim().parse::<usize>() {
                if n > cap {
                    return Err(Answer::bad(format!(
                        "--nodes {n} is more than this server's limit of {cap} processes (elect serve --{flag} raises it)"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Refuses an unknown algorithm among the query's `algorithms` (or `algorithm`), comma-separated, with the command
/// line's message naming it and the known ones: the first thing to say of a sweep, before what else it lacks.
fn known_algorithms(pairs: &[(String, String)]) -> Result<(), Answer> {
    let names = pairs.iter().filter(|(k, _)| k == "algorithms" || k == "algorithm").flat_map(|(_, v)| v.split(','));
    for name in names.map(str::trim).filter(|n| !n.is_empty() && !elect_algos::program::is_program(n)) {
        elect_algos::registry::lookup(name)
            .map_err(|e| Answer::bad(crate::outcome::short_line(&format!("error: {e}"))))?;
    }
    Ok(())
}

/// `GET /api/sim`: the object `elect sim --json` prints; with `view`, the report and the run's pictures (the
/// viewer, the space-time diagram, the topology).
pub(crate) fn sim(q: &str, caps: &Caps, view: bool) -> Answer {
    match sim_answer(q, caps, view) {
        Ok(answer) | Err(answer) => answer,
    }
}

fn sim_answer(q: &str, caps: &Caps, view: bool) -> Result<Answer, Answer> {
    let pairs = query::pairs(q).map_err(Answer::bad)?;
    nodes_first(&pairs, caps.sim_nodes, "max-nodes")?;
    let mut request: Request<sim::SimArgs> =
        query::request("elect sim", &pairs, caps.allow_files, sim::NEEDS).map_err(Answer::bad)?;
    if request.flags.replay.is_some() {
        return Err(Answer::bad("--replay is not served: ask /api/check for the counterexample instead"));
    }
    at_most(own(&request, "max_nodes", request.flags.max_nodes), caps.sim_nodes, "max-nodes", "processes")?;
    at_most(own(&request, "max_events", request.flags.max_events), caps.events, "max-events", "events")?;
    let given_nodes = request.gave("max_nodes");
    let args = &mut request.flags;
    if !given_nodes {
        args.max_nodes = caps.sim_nodes;
    }
    // A scenario file sets its own budget (the flag may not be given with it): the time limit holds it.
    let capped = args.max_events > caps.events && args.scenario.is_none();
    if capped {
        args.max_events = caps.events;
    }
    let watch = Watch { deadline: Instant::now() + caps.time(), cancel: cancel_flag() };
    let progress: elect_sim::ProgressFn = {
        let watch = watch.clone();
        Box::new(move |_| watch.check())
    };
    let collector = view.then(|| elect_viz::SharedCollector::new(elect_viz::Limits::default()));
    // A traced run reports its progress as seldom as any (every few million events), and an event of a dense run
    // writes kilobytes of trace: the trace itself watches the deadline too.
    let trace = collector.clone().map(|c| Box::new(Watched { inner: c, watch, writes: 0 }) as Box<dyn Write + Send>);
    let done =
        sim::simulate(&request.flags, sim::Hooks { progress: Some(progress), trace }).map_err(|e| cli_error(&e))?;
    let mut report = done.report;
    if capped {
        if !report.terminated && report.events >= caps.events {
            return Err(Answer::bad(format!(
                "the run passed this server's limit of {} events (elect serve --max-events raises it); ask for \
                 fewer processes, or for max-events={} to see the run cut short",
                caps.events, caps.events
            )));
        }
        // The run the request asked for, which ended before the server's bound: reported with its own command.
        report.reproduce = report.reproduce.replace(&format!(" --max-events {}", caps.events), "");
    }
    let outcome = if report.ok() { "held" } else { "violated" };
    let answer = match collector {
        None => {
            let mut body = serde_json::to_string(&report).map_err(|e| cli_error(&e.into()))?;
            body.push('\n');
            Answer::json(body)
        }
        Some(collector) => {
            let labels = request.flags.labels.read().map_err(|e| Answer::bad(format!("error: {}", e.0)))?;
            Answer::value(&pictures(&done.cfg, &report, &collector, labels))
        }
    };
    Ok(answer.with("x-elect-outcome", outcome.into()))
}

/// A request's deadline and cancellation flag, which abandon its run by unwinding ([`Abandoned`]).
#[derive(Clone)]
struct Watch {
    deadline: Instant,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Watch {
    fn check(&self) {
        let cancelled = self.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed));
        if cancelled || Instant::now() > self.deadline {
            std::panic::panic_any(Abandoned);
        }
    }
}

/// A trace writer that looks at its request's [`Watch`] every 256 writes.
struct Watched<W> {
    inner: W,
    watch: Watch,
    writes: u32,
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writes = self.writes.wrapping_add(1);
        if self.writes % 256 == 0 {
            self.watch.check();
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The report and the pictures of a run, for the page.
fn pictures(cfg: &SimConfig, report: &Report, collector: &elect_viz::SharedCollector, labels: Labels) -> Value {
    let mut out = json!({ "report": report });
    let mut run = match collector.finish() {
        Ok(run) => run,
        Err(e) => {
            out["pictures_error"] = json!(format!("no pictures: {e}"));
            return out;
        }
    };
    run.labels = labels;
    out["spacetime"] = json!(elect_viz::space_time_svg(&run));
    match elect_scenario::Scenario::build(cfg) {
        Ok(scenario) => {
            let layout = elect_viz::Layout::of(&scenario.graph);
            match elect_viz::topology_svg(&run, &layout) {
                Ok(svg) => out["topology"] = json!(svg),
                Err(e) => out["pictures_error"] = json!(format!("no topology: {e}")),
            }
            match elect_viz::html_viewer(&run, &layout) {
                Ok(html) => out["viewer"] = json!(html),
                Err(e) => out["pictures_error"] = json!(format!("no viewer: {e}")),
            }
        }
        Err(e) => out["pictures_error"] = json!(format!("no pictures: {e}")),
    }
    out
}

/// The checker's configuration of a request (`/api/check` and the explorer), under the server's limits: whether
/// the request asked for more states, seconds or memory than the server allows (so a search they cut short is
/// over a limit) comes with it.
pub(crate) struct Checking {
    pub(crate) config: elect_check::CheckConfig,
    /// The request's flags, the server's own limits set in them.
    request: Request<check::CheckArgs>,
    capped_states: bool,
    capped_time: bool,
    capped_memory: bool,
    /// The names the request gives message kinds and roles in the viewer.
    labels: Labels,
}

pub(crate) fn checking(pairs: &[(String, String)], caps: &Caps) -> Result<Checking, Answer> {
    nodes_first(pairs, caps.check_nodes, "max-check-nodes")?;
    let mut request: Request<check::CheckArgs> =
        query::request("elect check", pairs, caps.allow_files, check::NEEDS).map_err(Answer::bad)?;
    let args = &request.flags;
    if let Some(r) = own(&request, "max_nodes", args.max_nodes).filter(|&r| r > caps.check_nodes) {
        return Err(Answer::bad(format!(
            "--max-nodes {r} is more than this server's limit of {} processes (elect serve --max-check-nodes raises \
             it)",
            caps.check_nodes
        )));
    }
    at_most(args.max_states, caps.states, "max-states", "states")?;
    at_most(args.max_time, caps.seconds, "max-time", "seconds")?;
    at_most(args.max_memory, caps.memory, "max-memory", "bytes")?;
    let given_nodes = request.gave("max_nodes");
    let args = &mut request.flags;
    // The request's threads are its own business on the command line; here every request has one.
    args.threads = Some(1);
    if !given_nodes {
        args.max_nodes = caps.check_nodes;
    }
    let mut config = check::config(args).map_err(|e| cli_error(&e))?;
    let capped_states = config.max_states > caps.states;
    config.max_states = config.max_states.min(caps.states);
    let time = caps.time();
    let capped_time = config.max_time.is_none_or(|t| t > time);
    config.max_time = Some(config.max_time.map_or(time, |t| t.min(time)));
    config.cancel = cancel_flag();
    let capped_memory = config.max_memory.is_none_or(|m| m > caps.memory);
    config.max_memory = Some(config.max_memory.map_or(caps.memory, |m| m.min(caps.memory)));
    // A request's search keeps its states in memory: the server's disk is not the requests'.
    config.spill = None;
    let labels = request.flags.labels.read().map_err(|e| Answer::bad(format!("error: {}", e.0)))?;
    Ok(Checking { config, request, capped_states, capped_time, capped_memory, labels })
}

impl Checking {
    /// 400 if a bound of the server's (not one the request asked for) cut the search short.
    fn over_a_limit(&self, stopped: Option<&str>, caps: &Caps) -> Result<(), Answer> {
        let over = match stopped {
            Some("--max-states") if self.capped_states => {
                format!("{} states, the limit of this server (elect serve --max-states raises it)", caps.states)
            }
            Some("--max-time") if self.capped_time => {
                format!("{} seconds, the limit of this server (elect serve --max-seconds raises it)", caps.seconds)
            }
            Some("--max-memory") if self.capped_memory => format!(
                "{} of memory, the limit of this server (elect serve --max-memory raises it)",
                limits::bytes(caps.memory)
            ),
            _ => return Ok(()),
        };
        Err(Answer::bad(format!(
            "the search passed {over}; ask for a smaller scenario, or set the bound yourself (max-states, max-time, \
             max-depth) for a partial verdict"
        )))
    }
}

/// `GET /api/check`: the object `elect check --json` prints; with `view`, the outcome and the counterexample's
/// viewer, with what its path starts from (the messages in flight and the faults at time 0).
pub(crate) fn check(q: &str, caps: &Caps, view: bool) -> Answer {
    match check_answer(q, caps, view) {
        Ok(answer) | Err(answer) => answer,
    }
}

fn check_answer(q: &str, caps: &Caps, view: bool) -> Result<Answer, Answer> {
    let pairs = query::pairs(q).map_err(Answer::bad)?;
    let checking = checking(&pairs, caps)?;
    let args = &checking.request.flags;
    if args.every_arrangement {
        // One check per arrangement, each under the limits: n! of them at most.
        if checking.config.sim.nodes > MAX_ARRANGED {
            return Err(Answer::bad(format!(
                "--every-arrangement checks up to {MAX_ARRANGED}! arrangements here, not {}! (a limit of this \
                 server; elect check --every-arrangement has none)",
                checking.config.sim.nodes
            )));
        }
        let every =
            elect_check::check_every_arrangement(&checking.config).map_err(|e| Answer::bad(format!("error: {e}")))?;
        for (_, o) in &every.checked {
            checking.over_a_limit(o.stopped, caps)?;
        }
        checking.over_a_limit(every.stopped, caps)?;
        let ok = every.ok();
        return Ok(pretty(&every)?.with("x-elect-outcome", if ok { "held" } else { "violated" }.into()));
    }
    let body = elect_check::check(&checking.config).map_err(|e| Answer::bad(format!("error: {e}")))?;
    checking.over_a_limit(body.stopped, caps)?;
    if let Some(c) = &body.counterexample {
        if let Some(path) = &args.save {
            let command = check::command_words(&checking.request.texts);
            let text = elect_check::CounterexampleFile::new(command, c).to_json();
            std::fs::write(path, text).map_err(|e| {
                Answer::bad(format!("error: cannot write the counterexample file {}: {e}", path.display()))
            })?;
        }
        if let Some(path) = &args.html {
            let html = viewer(&checking.config, c, &checking.labels)?;
            std::fs::write(path, html)
                .map_err(|e| Answer::bad(format!("error: cannot write {}: {e}", path.display())))?;
        }
    }
    let outcome = if body.ok() { "held" } else { "violated" };
    if view {
        let (viewer, start) = match &body.counterexample {
            Some(c) => {
                let r = elect_check::replay(&checking.config, &c.actions)
                    .map_err(|e| Answer::bad(format!("error: {e}")))?;
                let html = check::viewer_html(&checking.config, &r, c.loop_start, &checking.labels)
                    .map_err(|e| cli_error(&e))?;
                (Some(html), Some(json!({ "in_flight": r.in_flight, "faults": r.start_faults })))
            }
            None => (None, None),
        };
        let answer = json!({ "outcome": body, "viewer": viewer, "start": start });
        return Ok(Answer::value(&answer).with("x-elect-outcome", outcome.into()));
    }
    Ok(pretty(&body)?.with("x-elect-outcome", outcome.into()))
}

/// A counterexample in the viewer, as `elect check --html` draws it.
fn viewer(
    config: &elect_check::CheckConfig,
    c: &elect_check::Counterexample,
    labels: &Labels,
) -> Result<String, Answer> {
    let r = elect_check::replay(config, &c.actions).map_err(|e| Answer::bad(format!("error: {e}")))?;
    check::viewer_html(config, &r, c.loop_start, labels).map_err(|e| cli_error(&e))
}

/// `value` as `elect check --json` prints it.
fn pretty(value: &impl serde::Serialize) -> Result<Answer, Answer> {
    let mut body = serde_json::to_string_pretty(value).map_err(|e| cli_error(&e.into()))?;
    body.push('\n');
    Ok(Answer::json(body))
}

/// `GET /api/sweep`: the rows of a small sweep (algorithms × sizes × seeds), as JSON, for Compare.
pub(crate) fn sweep(q: &str, caps: &Caps) -> Answer {
    match sweep_answer(q, caps) {
        Ok(answer) | Err(answer) => answer,
    }
}

fn sweep_answer(q: &str, caps: &Caps) -> Result<Answer, Answer> {
    let pairs = query::pairs(q).map_err(Answer::bad)?;
    known_algorithms(&pairs)?;
    let request: Request<sweep::SweepArgs> =
        query::request("elect sweep", &pairs, caps.allow_files, flag_text::Needs::default()).map_err(Answer::bad)?;
    let args = &request.flags;
    for (output, given) in [("out", args.out.is_some()), ("plot", args.plot.is_some())] {
        if given {
            return Err(Answer::bad(format!("--{output}: this endpoint answers with the rows; it writes no file")));
        }
    }
    at_most(own(&request, "max_nodes", args.max_nodes), caps.sim_nodes, "max-nodes", "processes")?;
    at_most(own(&request, "max_runs", args.max_runs), caps.runs, "max-runs", "runs")?;
    if let Some(&n) = args.nodes.0.iter().max() {
        if n > caps.sim_nodes {
            return Err(Answer::bad(format!(
                "{n} processes is more than this server's limit of {} (elect serve --max-nodes raises it)",
                caps.sim_nodes
            )));
        }
    }
    if matches!(args.ids, Ids::List(_)) {
        return Err(Answer::bad("error: a sweep needs ascending, descending or random ids, not a list"));
    }
    let mut template = SimConfig::new("", 1);
    template.topology = args.topology.clone();
    template.ids = args.ids.clone();
    template.initiators = args.initiators.clone();
    template.delay = args.delay;
    template.max_events = caps.events;
    let sweep = Sweep {
        algorithms: args.algorithms.clone(),
        sizes: args.nodes.clone(),
        seeds: args.seeds,
        synchronizers: args.synchronizers.clone(),
        template,
    };
    let runs = sweep.runs().map_err(|e| Answer::bad(format!("error: {e}")))?;
    match runs {
        Some(r) if r <= caps.runs => {}
        r => {
            return Err(Answer::bad(format!(
                "{} runs is more than this server's limit of {} per sweep (elect serve --max-runs raises it)",
                r.map_or_else(|| "more than 2^64".to_owned(), |r| r.to_string()),
                caps.runs
            )));
        }
    }
    let watch = Watch { deadline: Instant::now() + caps.time(), cancel: cancel_flag() };
    let mut rows: Vec<Row> = Vec::new();
    let mut kinds: Vec<&'static str> = Vec::new();
    let streamed = sweep.stream::<SimError>(elect_sim::Shard::ALL, Some(1), &|_| watch.check(), &mut |item| {
        match item {
            Streamed::Kinds(k) => kinds = k.to_vec(),
            Streamed::Row(row) => rows.push(*row),
        }
        Ok(())
    });
    streamed.map_err(|e| Answer::bad(format!("error: {e}")))?;
    let ok = rows.iter().all(|r| r.ok);
    Ok(Answer::value(&json!({ "kinds": kinds, "rows": rows }))
        .with("x-elect-outcome", if ok { "held" } else { "violated" }.into()))
}
