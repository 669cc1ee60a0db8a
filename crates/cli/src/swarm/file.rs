//! A swarm search's result file: what one search found, and how a file is read and checked before it is merged.

use std::path::Path;

use elect_check::{CounterexampleFile, Sample};
use serde::{Deserialize, Serialize};

use crate::limits::Limits;
use crate::outcome::{BadInput, Refused};

/// The `format` of a swarm search's result file.
pub(super) const FORMAT: &str = "elect-swarm";

/// The version written: 2, with a sample of the states seen. Version 1, without, is still merged (its coverage is
/// unknown).
pub(super) const VERSION: u32 = 2;

/// What one search of a swarm found.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SwarmFile {
    /// [`FORMAT`].
    pub(super) format: String,
    /// [`VERSION`], or 1.
    pub(super) version: u32,
    /// This search's number, from 0.
    pub(super) index: u64,
    /// The searches of the swarm.
    pub(super) count: u64,
    /// The seed its order was drawn from.
    pub(super) seed: u64,
    /// The arguments of `elect check` that ran it, without `--swarm` and `--out`: the same for every search.
    pub(super) check: Vec<String>,
    pub(super) states: u64,
    pub(super) transitions: u64,
    /// Every reachable state was explored.
    pub(super) complete: bool,
    /// The bound that stopped it, if one did.
    pub(super) stopped: Option<String>,
    pub(super) seconds: f64,
    /// The first violation it found.
    pub(super) counterexample: Option<CounterexampleFile>,
    /// The states it saw, sampled by fingerprint (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) sample: Option<Sample>,
}

/// The result file at `path`, read within the command line's limits and checked.
pub(super) fn read(path: &Path) -> anyhow::Result<SwarmFile> {
    let text = Limits::cli().read_file(path, "swarm result file")?;
    let file: SwarmFile = serde_json::from_str(&text)
        .map_err(|e| Refused(format!("{} is not a result file of elect check --swarm: {e}", path.display())))?;
    if file.format != FORMAT || !(1..=VERSION).contains(&file.version) {
        return Err(Refused(format!(
            "{} is {} version {}, not {FORMAT} version 1 or {VERSION}",
            path.display(),
            file.format,
            file.version
        ))
        .into());
    }
    if file.count == 0 || file.index >= file.count {
        return Err(
            Refused(format!("{}: search {} of {} does not exist", path.display(), file.index, file.count)).into()
        );
    }
    let bad = |problem: String| Err(BadInput(format!("{}: {problem}", path.display())).into());
    match &file.sample {
        None if file.version > 1 => {
            return bad(format!("a file of version {} has a sample, and it has none", file.version));
        }
        Some(_) if file.version == 1 => return bad("a file of version 1 has no sample, and it has one".to_owned()),
        Some(sample) => {
            if let Some(problem) = sample.invalid() {
                return bad(problem);
            }
            if sample.fingerprints.len() as u64 > file.states {
                return bad(format!(
                    "its sample holds {} states, more than the {} it saw",
                    sample.fingerprints.len(),
                    file.states
                ));
            }
        }
        None => {}
    }
    Ok(file)
}
