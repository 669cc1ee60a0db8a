//! Partial-order reduction: persistent sets computed from the topology.
//!
//! **Independence.** Two steps at different processes commute: a step changes only its own process, takes one
//! message from one of its incoming links (or fires one of its own timers), and adds messages at the tail of its
//! outgoing links. Adding at the tail of a link and taking from its head commute when the link is not empty, and
//! on unordered links, which are multisets, adding one message and taking another always commute. (Two processes
//! declaring themselves leader in one epoch are recorded in the order they do it, but either order ends in a
//! state that breaks P-Unique, where the search stops.)
//!
//! **Persistent sets.** From a process `i` with an enabled step, the set `N(i)` closes over the processes that
//! could send `i` (or a process already in `N(i)`) a message that would be delivered before the steps already
//! chosen: every live sender on an incoming link, except, on FIFO links, one that is not empty (what comes later
//! waits behind a message whose delivery is already in the set). Every enabled step of every process in `N(i)` is
//! the persistent set `T(i)`: no sequence of steps outside `T(i)` can reach a step that depends on one inside it
//! (Godefroid's condition C1), because such a step needs a message that only a process of `N(i)` could receive
//! first. The smallest `T(i)` is explored.
//!
//! **Provisos.** C0: `T(i)` is never empty. C2 (visibility): the properties read only the processes' statuses
//! and their declarations of leadership, so when a step of `T(i)` changes one the state is expanded in full. C3 (no step ignored for ever around
//! a cycle): when the graph may have a cycle, the search checks that every cycle passes through a state expanded
//! in full, on the edges it kept, and otherwise runs again without the reduction ([`crate::search`]). States
//! with a fault budget left and duplicating networks with copies left are expanded in full, unless the search
//! designated the processes that may crash up front ([`Model::designations`]): then a crash is a step of its own
//! process, independent of the others', and belongs to that process's set, as does its recovery when the budget
//! allows one crash and recoveries (a process that is down and may recover is then a sender like any other).
//!
//! **Timed runs.** Time passing depends on every process, so the steps of one instant are reduced instead
//! ([`persistent_now`]): one process's steps, when one of them must happen before time may pass; and of those,
//! one delivery alone when it commutes with every other delivery the process could take before it at this
//! instant ([`one_delivery_now`]).
//!
//! **Visibility before a timed run settles.** C2 is what keeps every path's sequence of statuses, which
//! "always" properties on statuses and the cycles that "eventually" is judged on need. Until a timed run has
//! settled, neither needs it, unless some "always" property reads the statuses: then it applies there too, to
//! what that property reads ([`Model::visible_to_reduction`]). One-leader (the lease mode's) reads only which live
//! processes say they lead, and its verdict in a state depends on nothing else, so only a step that changes that
//! set is visible to it; A1 and safety judged always read whole statuses. Without it, the reduction
//! still reaches every state of the full graph where nothing must happen now (the ends of instants; up to which
//! of two processes that declare themselves leader in one epoch was recorded first). Take a reduced state `s`,
//! its persistent set `T`, and a path `w` of the full graph from `s` to the end of the instant. `T` holds a step
//! that must happen before time passes, which no step outside `T` disables: so `w` takes a step of `T`, and the
//! first, `t`, commutes with the steps before it (C1). The path `t` then the rest of `w` starts with a step the
//! reduced graph has, and ends where `w` does; induction on its length does the rest, within an instant, where
//! there is no cycle. And what the properties need before the run settles is in those states: P-Unique's clash,
//! once recorded, stays in every later state; runs end, and so are judged "at end", only after they settle; a
//! leader counts for "sometimes" only at the end of an instant there ([`crate::search`]); and every cycle is in
//! the settled part of the run, the steady window, where C2 holds as before, entered from the end of an instant.
//! That last holds because time passes on every cycle and the settling time only runs down; a process that arms
//! a timer due at once, again and again, would break it, so the search checks that no cycle passes through a
//! state before the run settles, and otherwise runs again without the reduction. The states cut out are the
//! orders within an instant in which processes change their statuses: with the member at five processes, nearly
//! all of them.
//!
//! A unidirectional ring with FIFO links is the best case: a process with a message waiting depends on nobody,
//! so one delivery at a time is explored. On unordered rings every sender can overtake, `N(i)` goes round the
//! ring, and nothing is saved.

use elect_algos::Algorithm;

use std::collections::HashSet;

use crate::Network;
use crate::commute::Commuting;
use crate::model::{Action, Model, State};

/// The commuting rule, tried before the structural one: one delivery to a process whose deliveries commute
/// ([`crate::commute`]), with its loss on lossy links, is a persistent set. Steps at other processes are
/// independent of it (above); steps at the same process commute with it in every state it can reach; nothing but
/// its own loss takes its message away. The first such delivery that changes no status is taken (C2); if every
/// one does, the rule does not apply. Returns the steps and their successors.
pub(crate) fn commuting_step<A: Algorithm>(
    model: &Model<A>,
    commuting: &Commuting,
    state: &State<A::Process>,
    actions: &[Action],
) -> Option<Vec<(Action, State<A::Process>)>> {
    for &action in actions {
        let Action::Deliver { link, index } = action else { continue };
        if !commuting.at[model.receiver(link).0 as usize] {
            continue;
        }
        let next = model.step(state, action);
        if model.visible(state, &next) {
            continue;
        }
        let mut chosen = vec![(action, next)];
        let lose = Action::Lose { link, index };
        if actions.contains(&lose) {
            chosen.push((lose, model.step(state, lose)));
        }
        return Some(chosen);
    }
    None
}

/// The indices into `actions` (all enabled in `state`) of a smaller persistent set, or `None` to expand in full.
pub(crate) fn persistent<A: Algorithm>(
    model: &Model<A>,
    state: &State<A::Process>,
    actions: &[Action],
) -> Option<Vec<usize>> {
    if actions.len() < 2 || actions.iter().any(|&a| model.owner(a).is_none()) {
        return None;
    }
    if model.config.timed {
        return persistent_now(model, state, actions);
    }
    let n = state.len();
    let fifo = model.config.network == Network::Fifo;
    let mut busy = vec![false; n];
    for &a in actions {
        busy[model.owner(a).expect("local steps only") as usize] = true;
    }
    let mut best: Option<Vec<bool>> = None;
    let mut best_size = actions.len();
    let mut members = vec![false; n];
    let mut stack = Vec::new();
    for i in (0..n).filter(|&i| busy[i]) {
        members.fill(false);
        members[i] = true;
        stack.push(i);
        while let Some(x) = stack.pop() {
            for &slot in &model.in_links[x] {
                let y = model.sender(slot) as usize;
                // A process that is down sends nothing more, unless it may recover.
                let silent = !state.live(y) && !state.recoveries_left();
                if members[y] || silent || (fifo && !state.link_empty(slot)) {
                    continue;
                }
                members[y] = true;
                stack.push(y);
            }
        }
        let size = actions.iter().filter(|&&a| members[model.owner(a).expect("local") as usize]).count();
        if size < best_size {
            best_size = size;
            best = Some(members.clone());
            if size == 1 {
                break;
            }
        }
    }
    let members = best?;
    Some((0..actions.len()).filter(|&k| members[model.owner(actions[k]).expect("local") as usize]).collect())
}

/// Timed runs: the steps of one process at the present instant, when they are a persistent set.
///
/// **Why it holds.** Steps at one instant of different processes are independent, as in untimed runs, and a
/// message sent now arrives strictly later (delays are at least one tick), so another process's step never
/// enables a step of process `i` now but in one way: a timer waits while any message must still arrive now.
/// Process `i`'s steps `T(i)` are persistent when `i` has a step that must happen now and that no other process
/// can hold back: a message at the end of its delay (while it waits, so do every timer and time itself), or,
/// with no message due, a timer at the end of its span. Then no sequence of other processes' steps can reach a
/// step of `i` not already enabled, nor let time pass (the `Wait` step depends on everything), before some step
/// of `T(i)` has been taken. States where time may pass, or a fault or duplicate may happen, are expanded in
/// full (those steps belong to no one process), but for the crash of a designated process, a step of its own: it
/// drops the messages due to it, which could let a timer of `i` fire now only if no message were due to `i`, and
/// then `i` was anchored by a timer, with no message due at all.
///
/// **Cycles.** Every cycle of a timed run lets time pass, and a state where it may is expanded in full; the
/// search checks this proviso on the graph it keeps ([`crate::search`]) rather than assuming it.
fn persistent_now<A: Algorithm>(model: &Model<A>, state: &State<A::Process>, actions: &[Action]) -> Option<Vec<usize>> {
    let n = state.len();
    let arriving = Model::<A>::arriving(state);
    let mut steps = vec![0usize; n];
    let mut anchored = vec![false; n];
    for &a in actions {
        let i = model.owner(a).expect("local steps only") as usize;
        steps[i] += 1;
        let message = !matches!(a, Action::Fire { .. });
        anchored[i] |= (message || !arriving) && model.must_happen_now(state, a);
    }
    let i = (0..n).filter(|&i| anchored[i]).min_by_key(|&i| steps[i])?;
    let mine: Vec<usize> = (0..actions.len()).filter(|&k| model.owner(actions[k]) == Some(i as u32)).collect();
    if let Some(k) = one_delivery_now(model, state, actions, &mine) {
        return Some(vec![k]);
    }
    (mine.len() < actions.len()).then_some(mine)
}

/// The most states of one process's deliveries at one instant that [`one_delivery_now`] walks before it gives up.
const ORDERS_MAX: usize = 256;

/// Timed runs on FIFO links: one delivery of the process's steps `mine`, when it alone is a persistent set.
///
/// **Why.** A process that hears from several links at one instant may be handed their messages in any order,
/// and each order is a path of its own: a member that restarts is answered by every peer, and the orders of
/// eleven answers on three links are 11!/(4!·4!·3!) = 11,550. Many handlers end where they would have in any
/// order (a member keeps the highest epoch it heard, and whom it heard from).
///
/// **The test.** Let `a` be a delivery to process `i` that must happen now (at the end of its delay). Every
/// state that deliveries to `i` on its other links, in any order, can reach from here is walked (at most
/// [`ORDERS_MAX`]); in each, every other delivery `b` then enabled must commute with `a`: `b` then `a` and `a`
/// then `b` end in the same state (same fingerprint, same vectors: the same process states, messages in the
/// same order on every link, timers, durable states and declarations). Every step of `i` on the way must be a
/// delivery: a timer, a loss or a crash of `i` and the test fails.
///
/// **Why `{a}` is then persistent.** A path from here that does not take `a` takes steps of other processes,
/// which are independent of `a` (they neither read nor change `i`, and what they send `i` arrives later), and
/// deliveries to `i` on other links: each meets `a` in a state whose part at `i` (its state and the messages due
/// to it) is one the test walked, where they commute. No timer fires and time does not pass while `a`, which
/// must happen now, waits. Nothing but `a` takes its message from the head of its link. Visibility (C2) and
/// the cycle proviso (C3) are checked by the search as for any persistent set.
fn one_delivery_now<A: Algorithm>(
    model: &Model<A>,
    state: &State<A::Process>,
    actions: &[Action],
    mine: &[usize],
) -> Option<usize> {
    if mine.len() < 2 || model.config.network != Network::Fifo || !model.one_delivery {
        return None;
    }
    if mine.iter().any(|&k| !matches!(actions[k], Action::Deliver { .. })) {
        return None;
    }
    mine.iter().copied().find(|&k| model.must_happen_now(state, actions[k]) && commutes_now(model, state, actions[k]))
}

/// Whether delivery `a` commutes with every other delivery to its process that could come before it at this
/// instant ([`one_delivery_now`]).
fn commutes_now<A: Algorithm>(model: &Model<A>, state: &State<A::Process>, a: Action) -> bool {
    let Action::Deliver { link: a_link, .. } = a else { return false };
    let i = model.receiver(a_link).0;
    // The fewest states the walk below would take: the product, over `i`'s other links, of one more than the
    // messages at their head that may arrive now ([`Model::prefixes_now`]). Each prefix of those messages,
    // delivered, leaves other messages waiting, hence another state, and every prefix is reached (time does not
    // pass during the walk, and `i`'s steps do not change what waits for it), unless the walk fails first for
    // another reason. So where it passes [`ORDERS_MAX`] the walk would fail, and it is not taken: on nine members,
    // whose first instants bring each member a message on each of eight links, walking 256 states for each
    // delivery before giving up was most of a search's time.
    if model.prefixes_now(state, i, a_link) > ORDERS_MAX {
        return false;
    }
    // A walk's answer depends on `i`'s part of the state alone, which recurs under many states of the others: it
    // is kept, and a debug build checks each answer reused against a new walk.
    let Some(around) = model.around(state, a, i) else { return walk_commutes(model, state, a, i) };
    if let Some(commutes) = model.walked(around) {
        debug_assert_eq!(commutes, walk_commutes(model, state, a, i), "a walk's answer reused for {a:?}");
        return commutes;
    }
    let commutes = walk_commutes(model, state, a, i);
    model.remember_walk(around, commutes);
    commutes
}

/// The walk of [`commutes_now`]: every state that deliveries to `i` but `a` reach from `state` at this instant
/// (at most [`ORDERS_MAX`]), in each of which every such delivery commutes with `a`.
fn walk_commutes<A: Algorithm>(model: &Model<A>, state: &State<A::Process>, a: Action, i: u32) -> bool {
    let mut walked = vec![state.clone()];
    let mut seen = HashSet::from([state.fingerprint()]);
    let mut actions = Vec::new();
    let mut k = 0;
    while k < walked.len() {
        let x = &walked[k];
        model.actions(x, &mut actions);
        let after_a = model.step(x, a);
        let mut next = Vec::new();
        for &b in &actions {
            if model.owner(b) != Some(i) || b == a {
                continue;
            }
            let Action::Deliver { .. } = b else { return false };
            let after_b = model.step(x, b);
            if !model.step(&after_a, b).same_as(&model.step(&after_b, a)) {
                return false;
            }
            if seen.insert(after_b.fingerprint()) {
                next.push(after_b);
            }
        }
        walked.extend(next);
        if walked.len() > ORDERS_MAX {
            return false;
        }
        k += 1;
    }
    true
}

/// How many states each look ahead of [`designation_pays`] explores, at most.
const LOOK_AHEAD: usize = 10_000;

/// Whether designating the processes that may crash ([`Model::designations`]) pays: whether, without crashes, the
/// reduction keeps fewer than `1 / copies` of the states, as far as a short breadth-first look ahead sees (the
/// levels both the full and the reduced look ahead completed). Designating copies the states before the crash once
/// per designation and lets the reduction work on them; not designating expands them in full. Sound either way.
/// Once `stop` says so (the search's time is up), the look ahead ends where it is, and the search stops.
pub(crate) fn designation_pays<A: Algorithm>(model: &Model<A>, copies: usize, stop: &dyn Fn() -> bool) -> bool {
    let full = levels(model, false, usize::MAX, stop);
    // Only as many levels as the full look ahead counted are compared: the reduced graph, smaller, would go on
    // deeper, and its deep levels are where its one-delivery walks cost the most (at nine members, 24 s).
    let reduced = levels(model, true, full.len(), stop);
    let depth = full.len().min(reduced.len());
    let sum = |levels: &[usize]| levels[..depth].iter().sum::<usize>();
    sum(&full) > copies * sum(&reduced)
}

/// The number of states at each depth of the state graph without crashes, full or reduced, up to the first level
/// that takes the look ahead past [`LOOK_AHEAD`] states, and at most `max_levels` of them.
///
/// The level being expanded when the look ahead passes [`LOOK_AHEAD`] states is left there: the size of the level
/// it was building would not be counted anyway, and the rest of its expansion was most of the full look ahead's
/// memory (at nine members, 600 MB).
fn levels<A: Algorithm>(model: &Model<A>, reduced: bool, max_levels: usize, stop: &dyn Fn() -> bool) -> Vec<usize> {
    let root = model.root(0);
    let mut seen = HashSet::from([root.fingerprint()]);
    let (mut level, mut sizes, mut actions) = (vec![root], Vec::new(), Vec::new());
    while !level.is_empty() && seen.len() < LOOK_AHEAD {
        sizes.push(level.len());
        if sizes.len() >= max_levels {
            return sizes;
        }
        let mut next_level = Vec::new();
        for state in &level {
            if stop() {
                return sizes;
            }
            model.actions(state, &mut actions);
            let mut chosen: Vec<State<A::Process>> = Vec::new();
            if let Some(subset) = reduced.then(|| persistent(model, state, &actions)).flatten() {
                chosen = subset.iter().map(|&k| model.step(state, actions[k])).collect();
                if chosen.iter().any(|next| model.visible_to_reduction(state, next)) {
                    chosen.clear();
                }
            }
            if chosen.is_empty() {
                chosen = actions.iter().map(|&a| model.step(state, a)).collect();
            }
            next_level.extend(chosen.into_iter().filter(|next| seen.insert(next.fingerprint())));
            if seen.len() >= LOOK_AHEAD {
                return sizes;
            }
        }
        level = next_level;
    }
    sizes
}

#[cfg(test)]
mod tests {
    use elect_algos::Driver;
    use elect_scenario::Scenario;

    use super::*;
    use crate::{CheckConfig, CheckError};

    /// For the deliveries of the first states of a timed run where the walk is refused before it is taken (too
    /// many orders to walk), whether the walk, taken, fails too: one `bool` per delivery, at most `cases`.
    struct Refused {
        config: CheckConfig,
        scenario: Scenario,
        cases: usize,
    }

    impl Driver for Refused {
        type Output = Result<Vec<bool>, CheckError>;
        fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
            let model = Model::new(algorithm, self.scenario, self.config)?;
            let (mut level, mut seen, mut actions) = (vec![model.root(0)], HashSet::new(), Vec::new());
            let mut found = Vec::new();
            while !level.is_empty() && found.len() < self.cases {
                let mut next = Vec::new();
                for state in &level {
                    model.actions(state, &mut actions);
                    for &a in &actions {
                        let Action::Deliver { link, .. } = a else { continue };
                        let i = model.receiver(link).0;
                        if found.len() < self.cases
                            && model.must_happen_now(state, a)
                            && model.prefixes_now(state, i, link) > ORDERS_MAX
                        {
                            found.push(walk_commutes(&model, state, a, i));
                        }
                    }
                    next.extend(actions.iter().map(|&a| model.step(state, a)).filter(|s| seen.insert(s.fingerprint())));
                }
                level = next;
            }
            Ok(found)
        }
    }

    /// The full look ahead of [`levels`]: the levels it counted, and how many states it expanded.
    struct LookAhead {
        config: CheckConfig,
        scenario: Scenario,
    }

    impl Driver for LookAhead {
        type Output = Result<(Vec<usize>, usize), CheckError>;
        fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
            let model = Model::new(algorithm, self.scenario, self.config)?;
            // `stop` is asked once before each state is expanded.
            let expanded = std::cell::Cell::new(0);
            let sizes = levels(&model, false, usize::MAX, &|| {
                expanded.set(expanded.get() + 1);
                false
            });
            // The reduced look ahead, capped at as many levels, counts them and no more.
            let reduced = levels(&model, true, sizes.len(), &|| false);
            assert_eq!(reduced.len(), sizes.len(), "the reduced look ahead's levels {reduced:?}");
            Ok((sizes, expanded.get()))
        }
    }

    #[test]
    fn the_look_ahead_stops_in_the_level_that_takes_it_past_its_bound() {
        let mut config = CheckConfig::new(crate::member_sim("bully", 5));
        config.timed = true;
        let scenario = Scenario::build(&config.sim).expect("a valid scenario");
        let look = LookAhead { config: config.clone(), scenario: scenario.clone() };
        let (sizes, expanded) = crate::dispatch(&config, &scenario, look).expect("a model");
        let counted: usize = sizes.iter().sum();
        // Every level counted was whole when it began, within the bound; the last was being expanded when the
        // look ahead passed it, and the rest of it is left.
        assert!(counted < LOOK_AHEAD, "{counted} states counted in {sizes:?}");
        assert!(expanded < counted, "{expanded} states expanded of the {counted} counted in {sizes:?}");
        assert!(expanded > counted - sizes.last().expect("a level"), "a level before the last was cut short");
    }

    #[test]
    fn a_walk_with_more_orders_than_it_may_take_is_refused_as_taking_it_would() {
        let mut config = CheckConfig::new(crate::member_sim("bully", 9));
        config.timed = true;
        let scenario = Scenario::build(&config.sim).expect("a valid scenario");
        let refused = Refused { config: config.clone(), scenario: scenario.clone(), cases: 3 };
        let found = crate::dispatch(&config, &scenario, refused).expect("a model");
        // Nine members hear from eight links at once: some deliveries have more orders than a walk takes.
        assert_eq!(found.len(), 3, "no delivery with more than {ORDERS_MAX} orders among the first states");
        assert!(found.iter().all(|&commutes| !commutes), "a walk refused up front would have succeeded: {found:?}");
    }
}
