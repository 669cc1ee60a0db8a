//! Which processes' deliveries commute, found once per check by running the processes' own handlers.
//!
//! **Why.** On reordering links the structural reduction ([`crate::reduce::persistent`]) saves nothing on a ring
//! where every process has a message coming: any process upstream could send first. What it cannot see is that
//! many handlers do not care about the order their messages come in. A Chang–Roberts relay that forwards two
//! tokens ends in the same state, having sent the same two tokens, whichever it takes first. When that holds for
//! every pair of messages a process can ever be handed, in every state it can ever be in, one delivery to it is
//! a persistent set on its own: the interleavings where its messages come in another order reach the same states.
//!
//! **What can ever reach a process.** A fixpoint over the processes taken one at a time (a Cartesian, or
//! thread-modular, over-approximation): each process's states start from its state in the initial system state,
//! its messages from those in flight to it there; each known message is handed to each known state of its
//! receiver, and the resulting state and the messages sent are added, until nothing is new. Every state a
//! process takes in any run, and every message it receives, is among them: by induction on the run, each step
//! hands a known message to a known state. The pairs found together may never meet in a run, which only makes
//! the test stricter.
//!
//! **The test.** Process `i` commutes if, for each of its states `σ` and each two of its messages `a`, `b`,
//! handling `a` then `b` and `b` then `a` from `σ` end in equal states with equal effects. Effects are compared
//! as a multiset, but for the sends on one FIFO link, which must also come in the same order. On FIFO links two
//! messages on one link are not compared: they never both wait at its head.
//!
//! **When it applies.** Untimed runs on FIFO, reordering or lossy links, with no crash or recovery budget (a crash
//! hands its neighbours link events the fixpoint does not run) and no timer ever armed (a timer is a step of the
//! process the fixpoint does not run either): a handler that arms one, or an armed timer at the start, and the
//! analysis gives up. So does a fixpoint or a test that grows past its bounds, so that the check never waits on
//! it for long, and so does a handler that panics: the pairs the fixpoint makes up may never meet in a run, and
//! a handler may rightly assume they do not. Such a panic is caught and not printed.

use std::cell::Cell;
use std::collections::{HashSet, VecDeque};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use elect_algos::Algorithm;
use elect_core::{Effect, EffectOf, Process};
use serde::Serialize;

use crate::Network;
use crate::model::{Model, fingerprint};

/// The fixpoint gives up past this many local states and messages, over all processes.
const MAX_LOCAL: usize = 200_000;
/// The fixpoint and the test give up past this many handler calls.
const MAX_CALLS: u64 = 8_000_000;

/// What the analysis found, as a check reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Commutation {
    /// Processes whose deliveries commute.
    pub processes: usize,
    /// Local states found, over all processes.
    pub local_states: usize,
    /// Messages found, over all processes (a message on two links counts twice).
    pub messages: usize,
}

/// The processes whose deliveries commute, by position.
pub(crate) struct Commuting {
    pub(crate) at: Vec<bool>,
    pub(crate) found: Commutation,
}

/// One process's reachable states and messages, in the order found.
struct Local<P: Process> {
    states: Vec<P>,
    known_states: HashSet<P>,
    msgs: Vec<(u32, P::Msg)>,
    known_msgs: HashSet<(u32, P::Msg)>,
}

struct Fixpoint<P: Process> {
    local: Vec<Local<P>>,
    /// (position, state, message) pairs not yet run.
    work: VecDeque<(u32, u32, u32)>,
    size: usize,
}

impl<P: Process> Fixpoint<P> {
    fn add_state(&mut self, i: u32, p: P) {
        let l = &mut self.local[i as usize];
        if l.known_states.insert(p.clone()) {
            let s = l.states.len() as u32;
            l.states.push(p);
            self.work.extend((0..l.msgs.len() as u32).map(|m| (i, s, m)));
            self.size += 1;
        }
    }

    fn add_msg(&mut self, i: u32, port: u32, msg: P::Msg) {
        let l = &mut self.local[i as usize];
        if l.known_msgs.insert((port, msg.clone())) {
            let m = l.msgs.len() as u32;
            l.msgs.push((port, msg));
            self.work.extend((0..l.states.len() as u32).map(|s| (i, s, m)));
            self.size += 1;
        }
    }
}

/// Which processes of `model` commute, or `None` where the analysis does not apply or gave up.
pub(crate) fn analyse<A: Algorithm>(model: &Model<A>) -> Option<Commuting> {
    quietly(|| run(model)).flatten()
}

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, returning `None` if it panics, without the panic message the default hook would print.
fn quietly<R>(f: impl FnOnce() -> R) -> Option<R> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.get() {
                previous(info);
            }
        }));
    });
    QUIET.set(true);
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.set(false);
    result.ok()
}

/// The fixpoint, then the test.
// Long: the fixpoint and the test share the local states, the messages and the call budget.
fn run<A: Algorithm>(model: &Model<A>) -> Option<Commuting> {
    let config = &model.config;
    if config.timed
        || config.crashes > 0
        || config.recoveries > 0
        || !matches!(config.network, Network::Fifo | Network::Unordered | Network::Lossy)
    {
        return None;
    }
    let initial = model.initial();
    let n = initial.len();
    if initial.any_timer() || (0..n).any(|i| !initial.live(i)) {
        return None;
    }
    let mut fix = Fixpoint {
        local: (0..n)
            .map(|_| Local {
                states: Vec::new(),
                known_states: HashSet::new(),
                msgs: Vec::new(),
                known_msgs: HashSet::new(),
            })
            .collect(),
        work: VecDeque::new(),
        size: 0,
    };
    for i in 0..n as u32 {
        fix.add_state(i, model.process(&initial, i).expect("every process is up at the start").clone());
    }
    for (slot, msg) in model.in_flight(&initial) {
        let (to, port) = model.receiver(slot);
        fix.add_msg(to, port, msg);
    }
    let mut calls = 0u64;
    while let Some((i, s, m)) = fix.work.pop_front() {
        calls += 1;
        if calls > MAX_CALLS || fix.size > MAX_LOCAL {
            return None;
        }
        let l = &fix.local[i as usize];
        let mut p = l.states[s as usize].clone();
        let (port, msg) = l.msgs[m as usize].clone();
        for effect in model.receive(&mut p, port, msg) {
            match effect {
                Effect::Send { to, msg } => {
                    let (far, far_port) = model.receiver(model.slot(i, to));
                    fix.add_msg(far, far_port, msg);
                }
                Effect::SetTimer { .. } => return None,
                _ => {}
            }
        }
        fix.add_state(i, p);
    }
    let fifo = config.network == Network::Fifo;
    let mut at = vec![false; n];
    'processes: for (i, l) in fix.local.iter().enumerate() {
        let pairs = l.msgs.len() * l.msgs.len().saturating_sub(1) / 2;
        calls += 4 * (l.states.len() * pairs) as u64;
        if calls > MAX_CALLS {
            break;
        }
        for sigma in &l.states {
            for (k, a) in l.msgs.iter().enumerate() {
                for b in &l.msgs[k + 1..] {
                    if fifo && a.0 == b.0 {
                        continue;
                    }
                    if !commute(model, sigma, a, b, fifo) {
                        continue 'processes;
                    }
                }
            }
        }
        at[i] = true;
    }
    let found = Commutation {
        processes: at.iter().filter(|&&c| c).count(),
        local_states: fix.local.iter().map(|l| l.states.len()).sum(),
        messages: fix.local.iter().map(|l| l.msgs.len()).sum(),
    };
    Some(Commuting { at, found })
}

/// Whether handling `a` then `b` from `sigma` ends as handling `b` then `a` does.
fn commute<A: Algorithm>(
    model: &Model<A>,
    sigma: &A::Process,
    a: &(u32, <A::Process as Process>::Msg),
    b: &(u32, <A::Process as Process>::Msg),
    fifo: bool,
) -> bool {
    let run = |first: &(u32, _), second: &(u32, _)| {
        let mut p = sigma.clone();
        let mut effects: Vec<EffectOf<A::Process>> = model.receive(&mut p, first.0, Clone::clone(&first.1));
        effects.extend(model.receive(&mut p, second.0, Clone::clone(&second.1)));
        // FIFO: sends keep their order link by link (a stable sort by link); otherwise a multiset.
        effects.sort_by_key(|e| match e {
            Effect::Send { to, msg } => (0, to.0, if fifo { 0 } else { fingerprint(msg) }),
            other => (1, 0, fingerprint(other)),
        });
        (p, effects)
    };
    run(a, b) == run(b, a)
}

#[cfg(test)]
mod tests {
    use super::quietly;

    #[test]
    fn a_panic_is_caught_and_the_next_call_runs() {
        assert_eq!(quietly(|| -> u32 { panic!("a made-up pair") }), None);
        assert_eq!(quietly(|| 7), Some(7));
    }
}
