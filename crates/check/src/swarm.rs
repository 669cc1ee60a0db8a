//! Swarm search, for state spaces no one search covers: search I of N is a depth-first search that takes each
//! state's successors in an order drawn from the scenario's seed and I, bounded as any check is, whose findings
//! are a [`SwarmFile`] of its own; [`merge`] puts the files of a swarm together: any counterexample makes the
//! verdict, the shortest one is kept, and the states and transitions are added up. Each search is independent, so
//! the N searches run on as many cores or machines as there are.
//!
//! A search that completed explored every reachable state: its verdict is a proof, and so is the merge's. Otherwise
//! the merge says "no violation found", which is evidence, not proof (Holzmann's swarm verification), and says how
//! much evidence: each search keeps a coordinated sample of the states it saw (the same states in every search,
//! chosen by fingerprint), from which the merge estimates the distinct states the swarm covered and, by
//! capture–recapture over the searches, the size of the whole space ([`SwarmCoverage`], from
//! [`coverage`](crate::coverage)).
//!
//! Reading a file from disk, and printing, are the caller's: this module parses texts and returns values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{CheckConfig, CheckError, CounterexampleFile, Order, Sample};

/// The `format` of a swarm search's result file.
pub const SWARM_FORMAT: &str = "elect-swarm";

/// The version written: 2, with a sample of the states seen. Version 1, without, is still merged (its coverage is
/// unknown).
pub const SWARM_VERSION: u32 = 2;

/// What one search of a swarm found: its result file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwarmFile {
    /// [`SWARM_FORMAT`].
    pub format: String,
    /// [`SWARM_VERSION`], or 1.
    pub version: u32,
    /// This search's number, from 0.
    pub index: u64,
    /// The searches of the swarm.
    pub count: u64,
    /// The seed its order was drawn from.
    pub seed: u64,
    /// The arguments of `elect check` that ran it, without those that differ between searches: the same for
    /// every search of one swarm.
    pub check: Vec<String>,
    /// Unique states it visited.
    pub states: u64,
    /// Steps it took.
    pub transitions: u64,
    /// Every reachable state was explored.
    pub complete: bool,
    /// The bound that stopped it, if one did.
    pub stopped: Option<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The first violation it found.
    pub counterexample: Option<CounterexampleFile>,
    /// The states it saw, sampled by fingerprint (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Sample>,
}

/// Why files cannot be merged, or a text is not a swarm result file.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SwarmError {
    /// Not a result file, or not of this swarm (another scenario, a search given twice or missing): the files
    /// given are not one swarm's.
    #[error("{0}")]
    Refused(String),
    /// A result file whose fields contradict each other (an edited or corrupt file).
    #[error("{0}")]
    Invalid(String),
}

/// The seed of search `index`: the scenario's seed and the index, mixed (SplitMix64's finaliser) so that
/// neighbouring indices draw unrelated orders.
pub fn swarm_seed(seed: u64, index: u64) -> u64 {
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    mix(seed ^ mix(index.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// Runs search `index` of `count` of the swarm of `config`'s scenario: depth first, in the order drawn from
/// [`swarm_seed`], keeping a sample of the states it sees. `check` is the arguments that name the scenario, kept in
/// the file so that a merge can tell the searches of one swarm.
pub fn search(mut config: CheckConfig, index: u64, count: u64, check: Vec<String>) -> Result<SwarmFile, CheckError> {
    let seed = swarm_seed(config.sim.seed, index);
    config.order = Order::Dfs;
    config.shuffle = Some(seed);
    config.sample = Some(Sample::MOST);
    let outcome = crate::check(&config)?;
    Ok(SwarmFile {
        format: SWARM_FORMAT.to_owned(),
        version: SWARM_VERSION,
        index,
        count,
        seed,
        counterexample: outcome.counterexample.as_ref().map(|c| CounterexampleFile::new(check.clone(), c)),
        check,
        states: outcome.states,
        transitions: outcome.transitions,
        complete: outcome.complete,
        stopped: outcome.stopped.map(str::to_owned),
        seconds: outcome.seconds,
        sample: outcome.sample,
    })
}

impl SwarmFile {
    /// The result file `text` holds, checked; `name` (its path) names it in the errors.
    pub fn parse(name: &str, text: &str) -> Result<Self, SwarmError> {
        let refused = SwarmError::Refused;
        let file: Self = serde_json::from_str(text)
            .map_err(|e| refused(format!("{name} is not a result file of elect check --swarm: {e}")))?;
        if file.format != SWARM_FORMAT || !(1..=SWARM_VERSION).contains(&file.version) {
            return Err(refused(format!(
                "{name} is {} version {}, not {SWARM_FORMAT} version 1 or {SWARM_VERSION}",
                file.format, file.version
            )));
        }
        if file.count == 0 || file.index >= file.count {
            return Err(refused(format!("{name}: search {} of {} does not exist", file.index, file.count)));
        }
        let bad = |problem: String| Err(SwarmError::Invalid(format!("{name}: {problem}")));
        match &file.sample {
            None if file.version > 1 => {
                bad(format!("a file of version {} has a sample, and it has none", file.version))
            }
            Some(_) if file.version == 1 => bad("a file of version 1 has no sample, and it has one".to_owned()),
            Some(sample) => match sample.invalid() {
                Some(problem) => bad(problem),
                None if sample.fingerprints.len() as u64 > file.states => bad(format!(
                    "its sample holds {} states, more than the {} it saw",
                    sample.fingerprints.len(),
                    file.states
                )),
                None => Ok(file),
            },
            None => Ok(file),
        }
    }
}

/// The merge of a swarm's result files.
#[derive(Debug, Serialize)]
pub struct Merged<'a> {
    /// `elect-swarm-merged`.
    pub format: &'static str,
    /// 2.
    pub version: u32,
    /// The searches of the swarm.
    pub searches: u64,
    /// The arguments of `elect check` every search ran with.
    pub check: &'a [String],
    /// The states the searches counted, added up (a state seen by two searches counts twice).
    pub states: u64,
    /// The transitions, added up.
    pub transitions: u64,
    /// Some search explored every reachable state.
    pub complete: bool,
    /// `violated`, `held` (some search was complete and found nothing) or `no violation found`.
    pub verdict: &'static str,
    /// The shortest counterexample any search found.
    pub counterexample: Option<&'a CounterexampleFile>,
    /// Which search found it.
    pub found_by: Option<u64>,
    /// How much of the space the searches covered.
    pub coverage: SwarmCoverage,
}

/// Merges `files`, named by `names` in the errors: they must be the searches of one swarm, each once.
pub fn merge<'a>(files: &'a [SwarmFile], names: &[String]) -> Result<Merged<'a>, SwarmError> {
    let Some(first) = files.first() else { return Err(SwarmError::Refused("no result file to merge".to_owned())) };
    let mut seen: BTreeMap<u64, &String> = BTreeMap::new();
    for (f, name) in files.iter().zip(names) {
        if (f.count, &f.check) != (first.count, &first.check) {
            return Err(SwarmError::Refused(format!(
                "{name} is search {}/{} of `elect check {}`, not of the swarm of {} (`elect check {}`, {} searches)",
                f.index,
                f.count,
                f.check.join(" "),
                names[0],
                first.check.join(" "),
                first.count
            )));
        }
        if let Some(other) = seen.insert(f.index, name) {
            return Err(SwarmError::Refused(format!(
                "search {}/{} is given twice: {other} and {name}",
                f.index, f.count
            )));
        }
    }
    if let Some(missing) = (0..first.count).find(|i| !seen.contains_key(i)) {
        return Err(SwarmError::Refused(format!("search {missing}/{} of the swarm is missing", first.count)));
    }
    let shortest = files
        .iter()
        .filter_map(|f| f.counterexample.as_ref().map(|c| (c.actions.len(), f.index, c)))
        .min_by_key(|&(steps, index, _)| (steps, index));
    // A search that stopped at its first violation was stopped by no bound, and did not explore every state.
    let complete = files.iter().any(|f| f.complete && f.counterexample.is_none());
    Ok(Merged {
        format: "elect-swarm-merged",
        version: 2,
        searches: first.count,
        check: &first.check,
        states: files.iter().fold(0, |sum, f| sum.saturating_add(f.states)),
        transitions: files.iter().fold(0, |sum, f| sum.saturating_add(f.transitions)),
        complete,
        verdict: match (shortest, complete) {
            (Some(_), _) => "violated",
            (None, true) => "held",
            (None, false) => "no violation found",
        },
        counterexample: shortest.map(|(.., c)| c),
        found_by: shortest.map(|(_, index, _)| index),
        coverage: SwarmCoverage::of(files),
    })
}

/// How much of the state space a swarm covered.
#[derive(Debug, Serialize)]
pub struct SwarmCoverage {
    /// How the figures were found: `complete` (a search explored every reachable state: the space is its
    /// states, every one covered), `sample` (estimated from the searches' samples) or `unknown` (`note` says why).
    pub method: &'static str,
    /// Distinct states covered: exact with `complete`, or with `sample` when `exact` is true; estimated otherwise.
    pub distinct: Option<u64>,
    /// `distinct` is exact.
    pub exact: bool,
    /// The reachable states: exact with `complete`; with `sample`, the Chao2 estimate, which is a floor.
    pub space: Option<u64>,
    /// The percentage of `space` covered: 100 with `complete`; with `sample`, a ceiling.
    pub percent: Option<f64>,
    /// The sample's exponent `s` (1 state in `2ˢ` sampled).
    pub exponent: Option<u32>,
    /// The sampled states the searches saw.
    pub sampled: Option<u64>,
    /// How many of them exactly one search saw.
    pub seen_once: Option<u64>,
    /// How many of them exactly two searches saw.
    pub seen_twice: Option<u64>,
    /// Which search completed, with `complete`.
    pub complete_search: Option<u64>,
    /// Why the space is unknown, or a caution.
    pub note: Option<String>,
}

impl SwarmCoverage {
    fn unknown(note: String) -> Self {
        Self {
            method: "unknown",
            distinct: None,
            exact: false,
            space: None,
            percent: None,
            exponent: None,
            sampled: None,
            seen_once: None,
            seen_twice: None,
            complete_search: None,
            note: Some(note),
        }
    }

    /// The coverage of the searches of `files`, the whole swarm in order of their index.
    fn of(files: &[SwarmFile]) -> Self {
        // A search that stopped at a violation is complete in that no bound stopped it, and did not see every state.
        if let Some(f) = files.iter().find(|f| f.complete && f.counterexample.is_none()) {
            return Self {
                method: "complete",
                distinct: Some(f.states),
                exact: true,
                space: Some(f.states),
                percent: Some(100.0),
                complete_search: Some(f.index),
                note: None,
                ..Self::unknown(String::new())
            };
        }
        let mut samples = Vec::with_capacity(files.len());
        for f in files {
            match &f.sample {
                Some(s) => samples.push(s),
                None => {
                    return Self::unknown(format!("search {}'s file (version {}) has no sample", f.index, f.version));
                }
            }
        }
        if let Some(f) = files.iter().zip(&samples).find(|(_, s)| s.root != samples[0].root).map(|(f, _)| f) {
            return Self::unknown(format!(
                "search {} fingerprints states otherwise than search {} (another build of elect?)",
                f.index, files[0].index
            ));
        }
        let states: Vec<u64> = files.iter().map(|f| f.states).collect();
        let c = crate::coverage(&samples, &states);
        Self {
            method: "sample",
            distinct: Some(c.covered.round() as u64),
            exact: c.exact(),
            space: c.space.map(|s| s.round() as u64),
            percent: c.fraction().map(|f| f * 100.0),
            exponent: Some(c.exponent),
            sampled: Some(c.sampled),
            seen_once: Some(c.seen_once),
            seen_twice: Some(c.seen_twice),
            complete_search: None,
            note: c.space.is_none().then(|| "one search alone has no other to compare with".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_search_draws_its_own_order() {
        assert_ne!(swarm_seed(1, 0), swarm_seed(1, 1));
        assert_ne!(swarm_seed(1, 0), swarm_seed(2, 0));
        assert_eq!(swarm_seed(7, 3), swarm_seed(7, 3));
    }

    fn file(index: u64, count: u64) -> SwarmFile {
        SwarmFile {
            format: SWARM_FORMAT.to_owned(),
            version: 1,
            index,
            count,
            seed: swarm_seed(0, index),
            check: vec!["-a".to_owned(), "bully".to_owned()],
            states: 10 + index,
            transitions: 20,
            complete: false,
            stopped: Some("time".to_owned()),
            seconds: 1.0,
            counterexample: None,
            sample: None,
        }
    }

    #[test]
    fn a_merge_takes_each_search_once_and_adds_up_what_they_counted() {
        let names: Vec<String> = (0..3).map(|i| format!("s{i}")).collect();
        let files = [file(0, 3), file(2, 3), file(1, 3)];
        let merged = merge(&files, &names).unwrap();
        assert_eq!((merged.states, merged.transitions, merged.verdict), (33, 60, "no violation found"));
        assert_eq!(merged.coverage.method, "unknown", "version 1 files carry no sample");
        let twice = [file(0, 3), file(0, 3), file(1, 3)];
        assert_eq!(
            merge(&twice, &names).unwrap_err(),
            SwarmError::Refused("search 0/3 is given twice: s0 and s1".into())
        );
        let short = [file(0, 3), file(1, 3)];
        assert_eq!(
            merge(&short, &names).unwrap_err(),
            SwarmError::Refused("search 2/3 of the swarm is missing".into())
        );
        let mut other = file(1, 3);
        other.check.push("--timed".to_owned());
        assert!(
            matches!(merge(&[file(0, 3), other], &names), Err(SwarmError::Refused(m)) if m.contains("not of the swarm"))
        );
    }

    #[test]
    fn a_file_is_refused_when_it_is_not_a_search_of_a_swarm_and_invalid_when_it_contradicts_itself() {
        let text = |f: &SwarmFile| serde_json::to_string(f).unwrap();
        assert!(SwarmFile::parse("f", &text(&file(1, 3))).is_ok());
        assert!(matches!(SwarmFile::parse("f", "{}"), Err(SwarmError::Refused(_))));
        assert!(
            matches!(SwarmFile::parse("f", &text(&file(3, 3))), Err(SwarmError::Refused(m)) if m.contains("does not exist"))
        );
        let mut v2 = file(0, 1);
        v2.version = 2;
        assert!(matches!(SwarmFile::parse("f", &text(&v2)), Err(SwarmError::Invalid(m)) if m.contains("has none")));
    }
}
