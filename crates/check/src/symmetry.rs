//! Every arrangement of the ids at once, one per class of arrangements a symmetry of the topology relates.
//!
//! **The symmetry.** On a ring, rotating the positions maps each position's ring ports (`next`, `prev`) to the
//! same ports of its image, and its neighbours to its image's neighbours. A process is built from its
//! [`elect_core::Setup`] alone (its id, rank, ports and neighbours' ids; never its position), so the system with
//! ids `σ` and the one with ids `σ` rotated are the same system with positions renamed: every run of one is a
//! run of the other, state for state, with the same verdicts and the same number of states. Checking one
//! arrangement per rotation class (the one with the first id at position 0) covers all `n!` with `(n − 1)!`
//! checks. This needs initiators, faults and attributes named by id, which they are, except `--initiators
//! random:K`, drawn by position: then every arrangement is checked. Other topologies are checked in every
//! arrangement (a test shows the rotation classes' outcomes equal on rings).

use elect_core::NodeId;
use elect_scenario::{Ids, InitiatorSpec, Scenario, TopologyKind};
use serde::Serialize;

use crate::{CheckConfig, CheckError, Outcome, check, scenario};

/// The outcome of checking every arrangement.
#[derive(Clone, Debug, Serialize)]
pub struct Every {
    /// `n!`.
    pub arrangements: u64,
    /// The symmetry used (`rotations of the ring`), if any.
    pub symmetry: Option<&'static str>,
    /// One check per class: the representative's ids by position, and its outcome.
    pub checked: Vec<(Vec<NodeId>, Outcome)>,
    /// The bound that stopped the checks before every class was checked (`--max-time`, shared by all of them, or
    /// a cancellation), if one did.
    pub stopped: Option<&'static str>,
}

impl Every {
    /// Whether every arrangement was checked, and held.
    pub fn ok(&self) -> bool {
        self.stopped.is_none() && self.checked.iter().all(|(_, o)| o.ok())
    }
}

/// Checks every arrangement of the ids `1..=n` of `config`'s scenario (its `ids` are ignored).
pub fn check_every_arrangement(config: &CheckConfig) -> Result<Every, CheckError> {
    let n = config.sim.nodes;
    if !(2..=9).contains(&n) {
        return Err(CheckError::Arrangements(n));
    }
    let built: Scenario = scenario(config)?;
    let ring = matches!(built.graph.kind(), TopologyKind::Ring);
    let by_id = !matches!(config.sim.initiators, InitiatorSpec::Random(_));
    let symmetry = (ring && by_id).then_some("rotations of the ring");
    let mut checked = Vec::new();
    let mut ids: Vec<u32> = (1..=n as u32).collect();
    let arrangements = (1..=n as u64).product();
    // One time limit for all the checks: each gets what the ones before it left.
    let started = std::time::Instant::now();
    let mut stopped = None;
    loop {
        if symmetry.is_none() || ids[0] == 1 {
            let mut one = config.clone();
            if let Some(limit) = config.max_time {
                let left = limit.saturating_sub(started.elapsed());
                if left.is_zero() {
                    stopped = Some("--max-time");
                    break;
                }
                one.max_time = Some(left);
            }
            if config.cancelled() {
                stopped = Some("cancelled");
                break;
            }
            let list: Vec<NodeId> = ids.iter().map(|&i| NodeId(i)).collect();
            one.sim.ids = Ids::List(list.clone());
            let outcome = check(&one)?;
            let cut = matches!(outcome.stopped, Some("--max-time" | "cancelled"));
            if cut {
                stopped = outcome.stopped;
            }
            checked.push((list, outcome));
            if cut {
                break;
            }
        }
        if !next_permutation(&mut ids) {
            break;
        }
    }
    Ok(Every { arrangements, symmetry, checked, stopped })
}

/// The next permutation in lexicographic order; `false` after the last.
fn next_permutation(v: &mut [u32]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else { return false };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).expect("a larger element follows");
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::next_permutation;

    #[test]
    fn permutations_come_in_order_and_all_of_them() {
        let mut v = vec![1, 2, 3, 4];
        let mut seen = vec![v.clone()];
        while next_permutation(&mut v) {
            assert!(seen.last().unwrap() < &v);
            seen.push(v.clone());
        }
        assert_eq!(seen.len(), 24);
    }
}
