//! The search: breadth- or depth-first over fingerprinted states, batches of the frontier expanded in parallel and
//! merged in order, and, when the state graph may have cycles, a second pass that keeps its edges so that
//! "eventually" can be judged on the cycles (a run may loop for ever without settling).

use std::collections::VecDeque;
use std::time::Instant as Clock;

use elect_algos::Algorithm;
use elect_core::{Process, Violation, When};
use rayon::prelude::*;

use crate::commute::{self, Commuting};
use crate::model::{Action, Model, Packed, State};
use crate::{Counterexample, Memory, Order, Outcome, Sample, Verdict, reduce};

/// States expanded in parallel at a time.
const BATCH: usize = 256;

/// How many runs of a batch each thread takes on average, so that a thread that finishes early takes another.
const PIECES_PER_THREAD: usize = 4;

mod frontier;
mod graph;
mod seen;

use frontier::Frontier;
use graph::{Components, Flags, Graph};
use seen::Seen;

/// What one pass over the state graph found.
struct Pass {
    states: u64,
    transitions: u64,
    terminal: u64,
    depth: u32,
    /// No bound cut the pass short.
    complete: bool,
    /// Why not, if a bound did.
    stopped: Option<&'static str>,
    /// Some state has every live process agreeing on a leader, with the "at end" properties holding.
    elected: bool,
    /// An edge reached a state no deeper than its source: the graph may have a cycle.
    maybe_cyclic: bool,
    /// The first violation found of each property, and the state that shows it.
    violations: Vec<(u32, Violation)>,
    /// The search stopped at the first violation.
    stopped_early: bool,
    /// Each root's processes allowed to crash ([`Model::designations`]), by state number.
    designations: Vec<u64>,
    found: Vec<Found>,
    /// With edges kept: every edge, and each state's flags.
    graph: Option<Graph>,
    /// Each state's fingerprint, by number.
    fps: Vec<u64>,
    /// The exact mode: the step that first reached each state, by number (none for the roots), since two
    /// successors of one state may share a fingerprint there.
    steps: Option<Vec<Option<Action>>>,
    memory: Memory,
    /// The states seen, sampled ([`crate::CheckConfig::sample`]).
    sample: Option<Sample>,
}

/// How a state was first reached: the state it came from (itself, for a root) and its depth. Not the action:
/// [`path`] finds each step again by stepping the parent and matching fingerprints, which leaves a state eight
/// bytes here instead of twenty.
#[derive(Clone, Copy)]
struct Found {
    parent: u32,
    depth: u32,
}

/// One state's verdict, and how many successors it has.
struct Expanded {
    at: u32,
    quiescent: bool,
    elected: bool,
    settled: bool,
    violations: Vec<Violation>,
    /// Actions were left unexplored at the depth bound.
    cut: bool,
    /// The reduction explored only some of the enabled actions.
    reduced: bool,
    /// The state is part of a timed run that has not settled ([`Model::settling`]).
    settling: bool,
    /// How many of [`Piece::next`] are this state's successors (its transitions).
    successors: usize,
    /// The bound that stopped the expansion before it had every successor (then the search stops, not proven).
    gave_up: Option<&'static str>,
}

/// What one state's expansion may take: the bytes its piece's new successors may fill (the room the memory bound
/// leaves, shared among the pieces), and a test of the time bound. A state's successors are all held before they
/// are merged, and at dozens of members one state has thousands, each of hundreds of kilobytes: without these, one
/// expansion went gigabytes past `--max-memory` and many seconds past `--max-time`.
#[derive(Clone, Copy)]
struct Limits<'a> {
    room: usize,
    out_of_time: &'a (dyn Fn() -> bool + Sync),
}

/// Successors stepped between two looks at the clock.
const CLOCK_EVERY: usize = 64;

/// What one thread makes of a run of a batch's states, kept from one batch to the next for its memory.
struct Piece<P: Process> {
    expanded: Vec<Expanded>,
    /// The successors, in the order of the states and of their actions: each one's action, fingerprint, and what
    /// the expansion found of it.
    next: Vec<(Action, u64, Next)>,
    /// The successors not seen before the batch, in the same order, and whether each shows the properties what
    /// the state it came from does ([`Model::same_view`]). Kept apart, so that the many successors seen before
    /// cost a few bytes each on their way to the merge.
    new: Packed<P>,
    same: Vec<bool>,
    /// The buffer of enabled actions, the state being expanded, and the state its successors are stepped in
    /// ([`Model::step_into`]).
    actions: Vec<Action>,
    state: Option<State<P>>,
    scratch: Option<State<P>>,
}

impl<P: Process> Default for Piece<P> {
    fn default() -> Self {
        Self {
            expanded: Vec::new(),
            next: Vec::new(),
            new: Packed::default(),
            same: Vec::new(),
            actions: Vec::new(),
            state: None,
            scratch: None,
        }
    }
}

/// Where an expansion puts the successors it finds: [`Piece::next`], [`Piece::new`] and [`Piece::same`].
type Out<'a, P> = (&'a mut Vec<(Action, u64, Next)>, &'a mut Packed<P>, &'a mut Vec<bool>);

/// A successor as the expansion found it. The thread that expands a state looks its successors up in the states
/// seen before the batch, and compares their depths with its own, so that the merge, which runs on one thread,
/// looks up only the others.
#[derive(Clone, Copy)]
enum Next {
    /// Seen before the batch: its number, and whether it is no deeper than the state it came from (an edge that
    /// may close a cycle).
    Seen(u32, bool),
    /// Not seen before the batch: the next of [`Expanded::new`].
    New,
}

pub(crate) fn run<A: Algorithm>(model: &Model<A>) -> Outcome {
    let started = Clock::now();
    let config = &model.config;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads.unwrap_or(0))
        .build()
        .expect("the checker's threads start");
    let dfs = config.order == Order::Dfs;
    let mut reduced = config.reduce;
    let commuting = if reduced { commute::analyse(model) } else { None };
    // Depth-first passes cannot tell a back edge by depth: they keep the edges from the start. So do reduced timed
    // runs, whose cycles (time comes round) are expected, so that the cycle proviso is checked on the graph.
    let keep_edges = dfs || (reduced && config.timed);
    let mut pass = pool.install(|| search(model, reduced.then_some(commuting.as_ref()), dfs, keep_edges, started));
    let mut reduction_note = None;
    let mut components = None;
    if pass.complete && !pass.stopped_early {
        let cyclic = match &pass.graph {
            Some(g) => {
                let c = Components::new(g);
                let cyclic = c.any_cycle(g, |_, _| true);
                components = Some(c);
                cyclic
            }
            None => pass.maybe_cyclic,
        };
        let proviso = reduced
            && pass
                .graph
                .as_ref()
                .zip(components.as_ref())
                .is_some_and(|(g, c)| g.every_cycle_expanded_in_full() && !g.settling_on_cycle(c));
        if cyclic && ((reduced && !proviso) || pass.graph.is_none()) {
            // "Eventually" is judged on the cycles, and a reduced graph with a cycle of states all cut down by the
            // reduction breaks its cycle proviso, as does one through a state whose status changes it hid: the full
            // graph is explored.
            if reduced {
                reduction_note = Some("the state graph may have cycles: explored again without reduction");
            }
            reduced = false;
            // The reduced pass's graph goes before the full one is built.
            drop(components.take());
            (pass.graph, pass.found, pass.fps, pass.steps) = (None, Vec::new(), Vec::new(), None);
            pass = pool.install(|| search(model, None, dfs, true, started));
            components = pass.graph.as_ref().map(Components::new);
        }
    }
    let mut found: Vec<Counterexample> = std::mem::take(&mut pass.violations)
        .into_iter()
        .map(|(at, v)| counterexample(model, path(model, &pass, at).0, v, None))
        .collect();
    if pass.complete && !pass.stopped_early {
        if let (Some(graph), Some(c)) = (&pass.graph, &components) {
            if let Some(cycle) = unsettled_cycle(model, &pass, graph, c) {
                if !found.iter().any(|f| f.property == cycle.property) {
                    found.push(cycle);
                }
            }
        }
    }
    let commuting = commuting.filter(|_| reduced).map(|c| c.found);
    verdicts(model, pass, found, (reduced, commuting, reduction_note), started)
}

/// `reduce`: `None` for a full search, or the reduction's commuting processes, if any were found.
// Long: one loop over the frontier (bounds, the parallel expansion of a batch, the in-order merge), whose parts all
// read and write the pass being built; split, each would take the whole pass and the frontier.
fn search<A: Algorithm>(
    model: &Model<A>,
    reduce: Option<Option<&Commuting>>,
    dfs: bool,
    keep_edges: bool,
    started: Clock,
) -> Pass {
    let config = &model.config;
    // Distinct designations give distinct states: root `r` is state number `r`.
    // The look ahead that weighs designating stops where the search would: past `--max-time`, or given up.
    let out_of_time = || config.max_time.is_some_and(|limit| started.elapsed() >= limit) || config.cancelled();
    // It holds whole states, up to thousands of them: past the memory bound (looked at every 64 states), it stops.
    let weighed = std::cell::Cell::new(0u32);
    let weigh_stop = || {
        weighed.set(weighed.get().wrapping_add(1));
        let over = |limit| crate::memory::resident().is_some_and(|rss| rss > limit);
        out_of_time() || (weighed.get() % 64 == 0 && config.max_memory.is_some_and(over))
    };
    let designations = if reduce.is_some() {
        model.designations(|model, copies| reduce::designation_pays(model, copies, &weigh_stop))
    } else {
        vec![model.initial().doomed()]
    };
    let mut seen = Seen::new(config.exact);
    let mut frontier = Frontier::new(dfs, config.spill.as_ref());
    for &doomed in &designations {
        let root = model.root(doomed);
        frontier.push((seen.insert(root.fingerprint(), &root), false), &root);
    }
    let roots = frontier.len();
    let mut pass = Pass {
        states: roots as u64,
        transitions: 0,
        terminal: 0,
        depth: 0,
        complete: true,
        stopped: None,
        elected: false,
        maybe_cyclic: false,
        violations: Vec::new(),
        stopped_early: false,
        // Every state found, by number: how it was reached. States themselves live only in the frontier; a path
        // is rebuilt by stepping from its root ([`path`]).
        designations,
        found: (0..roots as u32).map(|at| Found { parent: at, depth: 0 }).collect(),
        graph: keep_edges.then(|| Graph::new(roots)),
        fps: Vec::new(),
        steps: config.exact.then(|| vec![None; roots]),
        memory: Memory::default(),
        sample: None,
    };
    let mut memory = crate::memory::Budget::new(config.max_memory, BATCH, dfs);
    // Breadth-first, in the order of the actions: each new state joins the frontier as it is numbered. Otherwise a
    // state's successors are ordered first.
    let in_order = !dfs && config.shuffle.is_none();
    let (mut pieces, mut pushed) = (Vec::<Piece<A::Process>>::new(), Vec::new());
    'search: while !frontier.is_empty() {
        if frontier.len() as u64 > pass.memory.frontier_peak {
            pass.memory.frontier_peak = frontier.len() as u64;
        }
        // The bounds, the caller giving up, and the frontier's files failing (with why) stop the search, not proven.
        let stop = if config.max_time.is_some_and(|limit| started.elapsed() >= limit) {
            Some(("--max-time", None))
        } else if config.cancelled() {
            Some(("cancelled", None))
        } else if memory.over() {
            Some(("--max-memory", None))
        } else {
            frontier.failed().map(|(bound, why)| (bound, Some(why.to_owned())))
        };
        if let Some((bound, why)) = stop {
            (pass.complete, pass.stopped, pass.memory.disk_error) = (false, Some(bound), why);
            break;
        }
        // A batch of the frontier is expanded in parallel, in runs of states one after another, then merged in
        // order, so that numbering, verdicts and paths do not depend on the number of threads.
        let batch = frontier.batch(memory.batch());
        let take = batch.len();
        let count = take.min(rayon::current_num_threads() * PIECES_PER_THREAD);
        if pieces.len() < count {
            pieces.resize_with(count, Piece::default);
        }
        // A third of each piece's share: a vector that doubles holds its old and its new buffer for a moment.
        let limits = Limits { room: memory.room() / count.max(1) / 3, out_of_time: &out_of_time };
        pieces[..count].par_iter_mut().enumerate().for_each(|(c, piece)| {
            piece.expanded.clear();
            piece.next.clear();
            piece.new.clear();
            piece.same.clear();
            // What the piece kept of its buffers from earlier batches is in the resident set already.
            let limits = Limits { room: piece.new.bytes().saturating_add(limits.room), ..limits };
            for k in c * take / count..(c + 1) * take / count {
                let (at, judged) = batch.read(k, &mut piece.state);
                let e = expand(model, judged, &pass.found, at, &seen, reduce, keep_edges, piece, &limits);
                let gave_up = e.gave_up.is_some();
                piece.expanded.push(e);
                if gave_up {
                    break;
                }
            }
        });
        frontier.taken(take);
        if let Some(bound) = pieces[..count].iter().flat_map(|p| &p.expanded).find_map(|e| e.gave_up) {
            (pass.complete, pass.stopped) = (false, Some(bound));
            break;
        }
        for piece in &mut pieces[..count] {
            let mut next = piece.next.iter();
            let mut new = 0..;
            for e in piece.expanded.drain(..) {
                let at = e.at;
                let depth = pass.found[at as usize].depth;
                pass.depth = pass.depth.max(depth);
                pass.elected |= e.elected;
                pass.terminal += u64::from(e.quiescent);
                if let Some(g) = &mut pass.graph {
                    g.expanded(at, Flags { settled: e.settled, reduced: e.reduced, settling: e.settling });
                }
                if !e.violations.is_empty() {
                    for v in e.violations {
                        if !pass.violations.iter().any(|(_, w)| w.property == v.property) {
                            pass.violations.push((at, v));
                        }
                    }
                    if !config.keep_going {
                        pass.stopped_early = true;
                        break 'search;
                    }
                    // A state that breaks a property is not explored further (it has no successors).
                    continue;
                }
                if e.cut {
                    pass.complete = false;
                    pass.stopped = Some("--max-depth");
                }
                pass.transitions += e.successors as u64;
                for &(action, fp, found) in next.by_ref().take(e.successors) {
                    let known = match found {
                        Next::Seen(j, back) => {
                            pass.maybe_cyclic |= back;
                            Ok(j)
                        }
                        Next::New => {
                            let i = new.next().expect("numbers for every successor");
                            match seen.get_packed(fp, &piece.new, i) {
                                Some(j) => {
                                    pass.maybe_cyclic |= pass.found[j as usize].depth <= depth;
                                    Ok(j)
                                }
                                None => Err(i),
                            }
                        }
                    };
                    let target = match known {
                        Ok(j) => j,
                        Err(i) => {
                            if pass.found.len() >= config.max_states.min(seen::MOST) {
                                pass.complete = false;
                                pass.stopped = Some("--max-states");
                                continue;
                            }
                            let j = seen.insert_packed(fp, &piece.new, i);
                            pass.found.push(Found { parent: at, depth: depth + 1 });
                            if let Some(steps) = &mut pass.steps {
                                steps.push(Some(action));
                            }
                            if let Some(g) = &mut pass.graph {
                                g.numbered();
                            }
                            pass.states += 1;
                            if in_order {
                                frontier.push_from((j, piece.same[i]), &piece.new, i);
                            } else {
                                pushed.push((j, piece.same[i], i));
                            }
                            j
                        }
                    };
                    if let Some(g) = &mut pass.graph
                        && !g.edge(target)
                    {
                        // More edges than a graph numbers: sixteen gigabytes of them, past any memory bound.
                        (pass.complete, pass.stopped) = (false, Some("--max-states"));
                        break 'search;
                    }
                }
                if let Some(seed) = config.shuffle {
                    pushed
                        .sort_by_key(|&(j, ..)| xxhash_rust::xxh3::xxh3_64_with_seed(&seen.fp(j).to_le_bytes(), seed));
                }
                if dfs {
                    // The first action's successor is taken first.
                    pushed.reverse();
                }
                for (j, judged, i) in pushed.drain(..) {
                    frontier.push_from((j, judged), &piece.new, i);
                }
            }
        }
        memory.expanded(take);
        if let Some(progress) = &config.progress {
            let (states, transitions, depth) = (pass.found.len() as u64, pass.transitions, pass.depth);
            let seconds = started.elapsed().as_secs_f64();
            (progress.0)(&crate::Searching { states, transitions, depth, waiting: frontier.len() as u64, seconds });
        }
    }
    let states = pass.found.len().max(1) as f64;
    let found_bytes = pass.found.capacity() * std::mem::size_of::<Found>();
    pass.memory.visited_bytes_per_state = (seen.bytes() + found_bytes) as f64 / states;
    pass.memory.exact = config.exact;
    pass.memory.disk_peak = frontier.disk_peak();
    pass.memory.collision_odds = if config.exact { 0.0 } else { Memory::collision_odds(pass.states) };
    let (messages, processes) = model.interned();
    (pass.memory.messages, pass.memory.process_states) = (messages as u64, processes as u64);
    pass.sample = config.sample.map(|most| seen.sample(most));
    if let Some(g) = &mut pass.graph {
        pass.memory.edges_bytes_per_state = g.bytes() as f64 / states;
    }
    // The graph is read only when the search completed; put in number order then, and let go of otherwise.
    if pass.complete && !pass.stopped_early {
        if let Some(g) = &mut pass.graph {
            g.finish(pass.found.len());
        }
    } else {
        pass.graph = None;
    }
    pass.fps = seen.into_fps();
    pass
}

/// Everything the search needs from one state: its verdict, and its successors with their fingerprints. `judged`:
/// the state shows the properties what the state it came from did, so its "always" verdicts are that state's,
/// which held (a state that breaks one is not expanded).
// Long: one state's verdict, then its successors in one of three ways (the commuting step, a persistent set, all).
#[allow(clippy::too_many_arguments)]
fn expand<A: Algorithm>(
    model: &Model<A>,
    judged: bool,
    reached: &[Found],
    at: u32,
    seen: &Seen<A::Process>,
    reduce: Option<Option<&Commuting>>,
    judge_settled: bool,
    piece: &mut Piece<A::Process>,
    limits: &Limits<'_>,
) -> Expanded {
    let Piece { next, new, same, actions, state, scratch, .. } = piece;
    let state = state.as_ref().expect("the state to expand");
    model.actions(state, actions);
    let actions = &actions[..];
    // A run may end here: nothing is left to happen but faults it need not suffer.
    let quiescent = actions.iter().all(|&a| Model::<A>::optional(a));
    let violations = if judged && !quiescent { Vec::new() } else { model.judge_all(state, quiescent) };
    let agreed = model.agreed(state);
    let settled = violations.is_empty() && (agreed || judge_settled) && model.judge(state, true).is_none();
    // Before a timed run settles, a leader counts once an instant's steps are all taken: the reduction takes one
    // order of the status changes within an instant, which need not pass through every state in between.
    let settling = model.settling(state);
    let mut e = Expanded {
        at,
        quiescent,
        elected: agreed && settled && !(settling && model.due_now(state)),
        settled,
        violations,
        cut: false,
        reduced: false,
        settling,
        successors: 0,
        gave_up: None,
    };
    let depth = reached[at as usize].depth;
    if !e.violations.is_empty() {
        return e;
    }
    if depth >= model.config.max_depth {
        e.cut = !actions.is_empty();
        return e;
    }
    // States seen in earlier batches are dropped here, while still in cache; the merge catches the rest. Only
    // the others are copied out of the scratch state the successors are stepped in.
    let (first, first_new) = (next.len(), new.len());
    let mut out: Out<'_, A::Process> = (next, new, same);
    // Records a successor; past a bound, says which (the expansion then stops).
    let found = |(next, new, same): &mut Out<'_, A::Process>, action: Action, successor: &State<A::Process>| {
        let fp = successor.fingerprint();
        match seen.get(fp, successor) {
            Some(j) => next.push((action, fp, Next::Seen(j, reached[j as usize].depth <= depth))),
            None => {
                same.push(model.same_view(state, successor));
                next.push((action, fp, Next::New));
                new.push(successor);
                if new.bytes() > limits.room {
                    return Some("--max-memory");
                }
            }
        }
        (next.len() % CLOCK_EVERY == 0 && (limits.out_of_time)()).then_some("--max-time")
    };
    let scratch = scratch.get_or_insert_with(|| state.clone());
    if let Some(commuting) = reduce {
        if let Some(chosen) = commuting.and_then(|c| reduce::commuting_step(model, c, state, actions)) {
            for (action, successor) in chosen {
                e.gave_up = e.gave_up.or(found(&mut out, action, &successor));
            }
            e.reduced = true;
            e.successors = out.0.len() - first;
            return e;
        }
        if let Some(subset) = reduce::persistent(model, state, actions) {
            let mut visible = false;
            for &k in &subset {
                model.step_into(state, actions[k], scratch);
                visible |= model.visible_to_reduction(state, scratch);
                e.gave_up = found(&mut out, actions[k], scratch);
                if visible || e.gave_up.is_some() {
                    break;
                }
            }
            if !visible || e.gave_up.is_some() {
                e.reduced = true;
                e.successors = out.0.len() - first;
                return e;
            }
            out.0.truncate(first);
            out.1.truncate(first_new);
            out.2.truncate(first_new);
        }
    }
    for &a in actions {
        model.step_into(state, a, scratch);
        e.gave_up = found(&mut out, a, scratch);
        if e.gave_up.is_some() {
            break;
        }
    }
    e.successors = out.0.len() - first;
    e
}

/// The path to state `at` from its root, as actions, and the state it reaches. A state keeps only its parent
/// ([`Found`]), so each step is found again: the parent is stepped by each action enabled in it until one gives the
/// fingerprint of the state next on the path (two successors of one state sharing a fingerprint is as unlikely as
/// any other collision of fingerprints). The exact mode, which rules collisions out, keeps the steps.
fn path<A: Algorithm>(model: &Model<A>, pass: &Pass, at: u32) -> (Vec<Action>, State<A::Process>) {
    let mut chain = vec![at];
    let mut i = at;
    while pass.found[i as usize].depth > 0 {
        i = pass.found[i as usize].parent;
        chain.push(i);
    }
    let mut state = model.root(pass.designations[i as usize]);
    let mut actions = Vec::with_capacity(chain.len() - 1);
    let mut all = Vec::new();
    for &next in chain.iter().rev().skip(1) {
        let action;
        if let Some(steps) = &pass.steps {
            action = steps[next as usize].expect("a state past a root was reached by a step");
            state = model.step(&state, action);
        } else {
            (action, state) = step_to(model, &state, pass.fps[next as usize], &mut all);
        }
        actions.push(action);
    }
    (actions, state)
}

/// The action that takes `state` to a state with fingerprint `fp`, and that state (`all`: a buffer for the
/// actions).
fn step_to<A: Algorithm>(
    model: &Model<A>,
    state: &State<A::Process>,
    fp: u64,
    all: &mut Vec<Action>,
) -> (Action, State<A::Process>) {
    model.actions(state, all);
    all.iter()
        .map(|&a| (a, model.step(state, a)))
        .find(|(_, next)| next.fingerprint() == fp)
        .expect("an edge of the graph is a step")
}

fn counterexample<A: Algorithm>(
    model: &Model<A>,
    mut actions: Vec<Action>,
    v: Violation,
    cycle: Option<Vec<Action>>,
) -> Counterexample {
    let loop_start = cycle.as_ref().map(|_| actions.len());
    actions.extend(cycle.into_iter().flatten());
    let mut state = model.initial();
    let mut path = Vec::with_capacity(actions.len());
    for &action in &actions {
        path.push(model.describe(&state, action));
        state = model.step(&state, action);
    }
    Counterexample {
        property: v.property.name(),
        cite: v.property.source(),
        detail: v.detail,
        path,
        loop_start,
        actions,
    }
}

/// A cycle through a state where an "at end" property fails: a run that can go on for ever without settling.
/// Returns the shortest path to the shallowest such state and a cycle back to it.
fn unsettled_cycle<A: Algorithm>(
    model: &Model<A>,
    pass: &Pass,
    graph: &Graph,
    c: &Components,
) -> Option<Counterexample> {
    let found = &pass.found[..];
    let n = found.len();
    let bad = (0..n as u32)
        .filter(|&s| !graph.settled(s as usize) && c.on_cycle(graph, s))
        .min_by_key(|&s| (found[s as usize].depth, s))?;
    // Breadth-first inside the component, from `bad` back to itself.
    let component = &c.component;
    let c = component[bad as usize];
    let mut back = vec![u32::MAX; n];
    let mut queue = VecDeque::from([bad]);
    let mut closing = None;
    'search: while let Some(x) = queue.pop_front() {
        for &y in graph.successors(x) {
            if component[y as usize] != c {
                continue;
            }
            if y == bad {
                closing = Some(x);
                break 'search;
            }
            if back[y as usize] == u32::MAX {
                back[y as usize] = x;
                queue.push_back(y);
            }
        }
    }
    let mut chain = Vec::new();
    let mut x = closing.expect("a state on a cycle reaches itself");
    while x != bad {
        chain.push(x);
        x = back[x as usize];
    }
    chain.reverse();
    let states: Vec<u32> = std::iter::once(bad).chain(chain).chain([bad]).collect();
    // The actions along the cycle: found again by stepping and comparing fingerprints.
    let (prefix, mut state) = path(model, pass, bad);
    let prefix_state = state.clone();
    let mut cycle = Vec::new();
    let mut all = Vec::new();
    for w in states.windows(2) {
        let action;
        (action, state) = step_to(model, &state, pass.fps[w[1] as usize], &mut all);
        cycle.push(action);
    }
    let violation =
        model.judge(&prefix_state, true).expect("a state that is not settled breaks an \"at end\" property");
    let mut v = violation;
    v.detail = format!("{} (and the run can go round a cycle of {} steps for ever)", v.detail, cycle.len());
    Some(counterexample(model, prefix, v, Some(cycle)))
}

fn verdicts<A: Algorithm>(
    model: &Model<A>,
    pass: Pass,
    mut found: Vec<Counterexample>,
    (reduced, commuting, reduction_note): (bool, Option<commute::Commutation>, Option<&'static str>),
    started: Clock,
) -> Outcome {
    let judged = |name: &'static str| {
        if found.iter().any(|c| c.property == name) {
            "violated"
        } else if pass.complete && !pass.stopped_early {
            "held"
        } else {
            "unknown"
        }
    };
    let mut verdicts: Vec<Verdict> = model
        .checks
        .iter()
        .map(|c| Verdict {
            property: c.property.name(),
            modality: if c.when == When::Always { "always" } else { "eventually" },
            result: judged(c.property.name()),
        })
        .collect();
    verdicts.push(Verdict {
        property: "leader",
        modality: "sometimes",
        result: if pass.elected {
            "held"
        } else if pass.complete && !pass.stopped_early {
            "violated"
        } else {
            "unknown"
        },
    });
    let config = &model.config;
    Outcome {
        algorithm: model.algorithm.info().name,
        nodes: model.scenario.len(),
        network: config.network,
        timed: config.timed,
        crashes: config.crashes,
        recoveries: config.recoveries,
        order: config.order,
        reduction: if reduced { "partial-order" } else { "none" },
        reduction_note,
        commuting,
        states: pass.states,
        transitions: pass.transitions,
        terminal: pass.terminal,
        depth: pass.depth,
        complete: pass.complete,
        stopped: pass.stopped,
        seconds: started.elapsed().as_secs_f64(),
        memory: pass.memory,
        properties: model.checks.iter().map(|c| c.property.name()).collect(),
        verdicts,
        leader_reachable: pass.elected,
        counterexample: (!found.is_empty()).then(|| found.remove(0)),
        more: found,
        sample: pass.sample,
    }
}

#[cfg(test)]
mod tests;
