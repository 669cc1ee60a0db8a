//! How much of a state space a swarm's searches covered, from a coordinated sample of the states each one saw.
//!
//! **The sample.** A state is sampled at exponent `s` when the top `s` bits of its fingerprint are zero: a rate of
//! `2⁻ˢ`, and since fingerprints are uniform and the same for a state in every search (they hash the state's
//! contents with fixed seeds, nothing drawn per process or per search), every search samples the *same* states.
//! A search keeps the states it saw at the least exponent that keeps at most [`Sample::MOST`] of them (adaptive
//! threshold sampling, done once at the end from the fingerprints the search keeps anyway).
//!
//! **The estimate.** At the largest exponent of the swarm, the union of the samples is a sample of the states
//! covered: their number times `2ˢ` estimates how many distinct states the swarm covered. For each sampled state,
//! how many searches saw it is its *incidence*, and capture–recapture estimates the states none saw from how
//! many were seen once (`Q1`) and twice (`Q2`): Chao's incidence estimator, Chao2, `S + (m−1)/m · Q1²/(2·Q2)`
//! for `S` sampled states and `m` searches (`Q1(Q1−1)/2` in place of `Q1²/(2·Q2)` when `Q2` is 0), times `2ˢ`.
//! Chao2 is a lower bound when states are not all equally likely to be seen, and the searches of a swarm are far
//! from that: each starts from the same state, so the states near it are seen by all and the deep ones by few,
//! and the searches are not independent. The estimate of the space is a floor, and the fraction covered a ceiling.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

/// A coordinated sample of the states a search saw: every one whose fingerprint's top `exponent` bits are zero.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// `s`: a state is sampled when its fingerprint is below `2⁶⁴⁻ˢ` (a rate of `2⁻ˢ`).
    pub exponent: u32,
    /// The fingerprint of the search's first state: the same in every search of one swarm run by one build of
    /// elect, so that samples taken with different fingerprints are not compared.
    pub root: u64,
    /// The sampled states' fingerprints, in increasing order.
    pub fingerprints: Vec<u64>,
}

impl Sample {
    /// The most fingerprints a sample keeps: 512 KiB, and a relative error of about 0.4% on the states covered.
    pub const MOST: usize = 1 << 16;

    /// The sample of the states whose fingerprints are `fps` (the first one's is `fps[0]`), at the least exponent
    /// that keeps at most `most` of them (at least 1).
    pub fn of(fps: &[u64], most: usize) -> Self {
        let most = most.max(1);
        // How many fingerprints have each number of leading zeros: those sampled at `s` have at least `s`.
        let mut zeros = [0usize; 65];
        for fp in fps {
            zeros[fp.leading_zeros() as usize] += 1;
        }
        let (mut exponent, mut kept) = (0, fps.len());
        while kept > most && exponent < 64 {
            kept -= zeros[exponent];
            exponent += 1;
        }
        let mut fingerprints: Vec<u64> = fps.iter().copied().filter(|&fp| sampled(fp, exponent as u32)).collect();
        fingerprints.sort_unstable();
        // Two states share a fingerprint only in the exact mode (`--exact`), where both are explored.
        fingerprints.dedup();
        Self { exponent: exponent as u32, root: fps.first().copied().unwrap_or(0), fingerprints }
    }

    /// Why this is not a sample [`Sample::of`] could have made, if it is not: too many fingerprints, an exponent
    /// past 64, fingerprints out of order, repeated, or not sampled at the exponent.
    pub fn invalid(&self) -> Option<String> {
        if self.exponent > 64 {
            return Some(format!("its sample's exponent is {}, past 64", self.exponent));
        }
        if self.fingerprints.len() > Self::MOST {
            return Some(format!(
                "its sample holds {} fingerprints, more than {}",
                self.fingerprints.len(),
                Self::MOST
            ));
        }
        if let Some(k) = self.fingerprints.windows(2).position(|w| w[0] >= w[1]) {
            return Some(format!("its sample's fingerprints are not in increasing order (at {})", k + 1));
        }
        if let Some(fp) = self.fingerprints.iter().find(|&&fp| !sampled(fp, self.exponent)) {
            return Some(format!("its sample holds {fp}, which is not sampled at exponent {}", self.exponent));
        }
        None
    }

    /// The fingerprints sampled at `exponent`, no less than this sample's, in increasing order.
    fn at(&self, exponent: u32) -> impl Iterator<Item = u64> + '_ {
        self.fingerprints.iter().copied().filter(move |&fp| sampled(fp, exponent))
    }
}

/// Whether a state whose fingerprint is `fp` is sampled at `exponent`.
fn sampled(fp: u64, exponent: u32) -> bool {
    fp.leading_zeros() >= exponent
}

/// What the samples of a swarm's searches say of the states it covered and of the whole space.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Coverage {
    /// The searches, `m`.
    pub searches: u64,
    /// The common exponent `s`: the largest of the samples'.
    pub exponent: u32,
    /// Distinct states in the union of the samples at `s`.
    pub sampled: u64,
    /// Sampled states exactly one search saw, `Q1`.
    pub seen_once: u64,
    /// Sampled states exactly two searches saw, `Q2`.
    pub seen_twice: u64,
    /// Distinct states covered: `sampled · 2ˢ`, and at least the most one search saw (exact when `s` is 0).
    pub covered: f64,
    /// The Chao2 estimate of all the reachable states, at least `covered`; `None` for a single search, which
    /// has nothing to compare.
    pub space: Option<f64>,
}

impl Coverage {
    /// Whether `covered` is exact: the samples hold every state each search saw.
    pub fn exact(&self) -> bool {
        self.exponent == 0
    }

    /// The share of the space covered (a ceiling, as the estimate of the space is a floor).
    pub fn fraction(&self) -> Option<f64> {
        self.space.map(|space| if space > 0.0 { (self.covered / space).min(1.0) } else { 1.0 })
    }
}

/// The coverage of the searches whose samples are `samples`, each of which saw `states[i]` states (exactly).
pub fn coverage(samples: &[&Sample], states: &[u64]) -> Coverage {
    let exponent = samples.iter().map(|s| s.exponent).max().unwrap_or(0);
    let (sampled, seen_once, seen_twice) = incidence(samples, exponent);
    let m = samples.len() as f64;
    let scale = f64::from(exponent).exp2();
    let most = states.iter().copied().max().unwrap_or(0) as f64;
    let sum: u64 = states.iter().sum();
    let covered = (sampled as f64 * scale).max(most).min(sum as f64);
    let space = (samples.len() > 1).then(|| {
        let (s, q1, q2) = (sampled as f64, seen_once as f64, seen_twice as f64);
        let unseen = if seen_twice > 0 { q1 * q1 / (2.0 * q2) } else { q1 * (q1 - 1.0).max(0.0) / 2.0 };
        ((s + (m - 1.0) / m * unseen) * scale).max(covered)
    });
    Coverage { searches: samples.len() as u64, exponent, sampled, seen_once, seen_twice, covered, space }
}

/// The union of the samples at `exponent`: how many states, and how many of them one search saw and two did.
fn incidence(samples: &[&Sample], exponent: u32) -> (u64, u64, u64) {
    let mut lists: Vec<_> = samples.iter().map(|s| s.at(exponent)).collect();
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> =
        lists.iter_mut().enumerate().filter_map(|(i, l)| l.next().map(|fp| Reverse((fp, i)))).collect();
    let (mut sampled, mut once, mut twice) = (0, 0, 0);
    while let Some(Reverse((fp, i))) = heap.pop() {
        let mut seen_by = 1;
        let mut next = |heap: &mut BinaryHeap<_>, i: usize| {
            if let Some(fp) = lists[i].next() {
                heap.push(Reverse((fp, i)));
            }
        };
        next(&mut heap, i);
        while let Some(&Reverse((same, j))) = heap.peek() {
            if same != fp {
                break;
            }
            heap.pop();
            seen_by += 1;
            next(&mut heap, j);
        }
        sampled += 1;
        once += u64::from(seen_by == 1);
        twice += u64::from(seen_by == 2);
    }
    (sampled, once, twice)
}

#[cfg(test)]
mod tests;
