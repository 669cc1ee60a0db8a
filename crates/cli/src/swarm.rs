//! Swarm search, for state spaces no one search covers: `elect check --swarm I/N` runs search I of N, a depth-first
//! search that takes each state's successors in an order drawn from the scenario's seed and I, bounded as any check
//! is (`--max-memory`, `--max-time`, `--max-states`), and writes what it found to a result file of its own;
//! `elect merge` puts the result files together: any counterexample makes the verdict, the shortest one is kept,
//! and the states and transitions are added up. Each search is independent, so the N searches run on as many
//! cores or machines as there are, under any batch scheduler (the index comes from its array variables, as a
//! sweep's shard does).
//!
//! A search that completed explored every reachable state: its verdict is a proof, and so is the merge's. Otherwise
//! the merge says "no violation found", which is evidence, not proof (Holzmann's swarm verification), and says how
//! much evidence: each search keeps a coordinated sample of the states it saw (the same states in every search,
//! chosen by fingerprint), from which the merge estimates the distinct states the swarm covered and, by
//! capture–recapture over the searches, the size of the whole space ([`coverage`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use elect_check::{CheckConfig, CounterexampleFile, Order, Outcome as Checked, Sample};
use elect_sim::Shard;
use serde::Serialize;

use crate::limits;
use crate::outcome::Refused;
use crate::outcome::{BadInput, Outcome};
use crate::shard::{self, Atomic, Chosen, ShardArg};

mod coverage;
mod file;

use file::{FORMAT, SwarmFile, VERSION, read};

/// The seed of search `index`: the scenario's seed and the index, mixed (SplitMix64's finaliser) so that
/// neighbouring indices draw unrelated orders.
fn seed_of(seed: u64, index: u64) -> u64 {
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    mix(seed ^ mix(index.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// Which search of the swarm this is: `--swarm I/N`, or `--swarm array` and the scheduler's array index.
pub(crate) fn choose(flag: &str, count: Option<u64>) -> anyhow::Result<Chosen> {
    let given = if flag == "array" { None } else { Some(flag.parse::<ShardArg>().map_err(BadInput)?) };
    let chosen = shard::choose(given, count, &|name| std::env::var(name).ok())?.ok_or_else(|| {
        BadInput(
            "--swarm array takes the search's number from a batch scheduler (SLURM_ARRAY_TASK_ID, \
             JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX), and none is set: give --swarm I/N"
                .to_owned(),
        )
    })?;
    Ok(Chosen { from: chosen.from.replace("--shard", "--swarm"), ..chosen })
}

/// Runs search `chosen` of the swarm of `config`'s scenario and writes its result file beside `out`; `argv` are the
/// check's arguments, without those that only shape its output.
pub(crate) fn run(mut config: CheckConfig, chosen: &Chosen, out: &Path, argv: &[String]) -> anyhow::Result<Outcome> {
    let Shard { index, count } = chosen.shard;
    let seed = seed_of(config.sim.seed, index);
    config.order = Order::Dfs;
    config.shuffle = Some(seed);
    config.sample = Some(Sample::MOST);
    eprintln!("search {index}/{count} of a swarm (from {}), seed {seed}", chosen.from);
    let outcome: Checked = elect_check::check(&config).map_err(|e| BadInput(e.to_string()))?;
    let check = member_args(argv);
    let file = SwarmFile {
        format: FORMAT.to_owned(),
        version: VERSION,
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
    };
    let path = path(out, chosen.shard);
    let mut w = Atomic::create(&path)?;
    serde_json::to_writer_pretty(&mut w, &file)?;
    writeln!(w)?;
    w.commit()?;
    let found = match &file.counterexample {
        Some(c) => format!("{} VIOLATED in {} steps", c.property, c.actions.len()),
        None if file.complete => "complete, nothing violated".to_owned(),
        None => format!("nothing violated, stopped by {}", file.stopped.as_deref().unwrap_or("a bound")),
    };
    eprintln!(
        "search {index}/{count}: {} states, {} transitions, {found}; written to {}",
        file.states,
        file.transitions,
        path.display()
    );
    // The search ran and its file is written: what it found is the merge's to judge, so that a scheduler runs the
    // merge after every search (a failed search is one that wrote no file).
    Ok(Outcome::Held)
}

/// The check's arguments without those that differ between the searches of a swarm.
fn member_args(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut args = argv.iter().cloned();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--swarm" | "--out" | "--swarm-count" => {
                args.next();
            }
            _ if a.starts_with("--swarm=") || a.starts_with("--out=") || a.starts_with("--swarm-count=") => {}
            _ => out.push(a),
        }
    }
    out
}

/// Where search `shard`'s file goes: `out`'s name with `.swarm-I-of-N` before its extension.
fn path(out: &Path, shard: Shard) -> PathBuf {
    let stem = out.file_stem().map_or_else(|| "swarm".into(), |s| s.to_string_lossy().into_owned());
    let ext = out.extension().map_or_else(|| "json".into(), |e| e.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.swarm-{}-of-{}.{ext}", shard.index, shard.count))
}

/// Whether `text` is a swarm result file (rather than a sweep's shard).
pub(crate) fn is_swarm_file(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// The merge of a swarm's result files, as `elect merge --json` prints it and `--out` keeps it.
#[derive(Serialize)]
struct Merged<'a> {
    format: &'static str,
    version: u32,
    searches: u64,
    check: &'a [String],
    states: u64,
    transitions: u64,
    /// Some search explored every reachable state.
    complete: bool,
    /// `violated`, `held` (some search was complete and found nothing) or `no violation found`.
    verdict: &'static str,
    /// The shortest counterexample any search found.
    counterexample: Option<&'a CounterexampleFile>,
    /// Which search found it.
    found_by: Option<u64>,
    /// How much of the space the searches covered.
    coverage: coverage::Report,
}

/// `elect merge` of swarm result files: checks they are the searches of one swarm, each once, and writes the merge.
pub(crate) fn merge(paths: &[PathBuf], out: &Path, save: Option<&Path>, json: bool) -> anyhow::Result<Outcome> {
    let files = paths.iter().map(|p| read(p)).collect::<anyhow::Result<Vec<_>>>()?;
    let first = &files[0];
    let mut seen: BTreeMap<u64, &PathBuf> = BTreeMap::new();
    for (f, p) in files.iter().zip(paths) {
        if (f.count, &f.check) != (first.count, &first.check) {
            return Err(Refused(format!(
                "{} is search {}/{} of `elect check {}`, not of the swarm of {} (`elect check {}`, {} searches)",
                p.display(),
                f.index,
                f.count,
                f.check.join(" "),
                paths[0].display(),
                first.check.join(" "),
                first.count
            ))
            .into());
        }
        if let Some(other) = seen.insert(f.index, p) {
            return Err(Refused(format!(
                "search {}/{} is given twice: {} and {}",
                f.index,
                f.count,
                other.display(),
                p.display()
            ))
            .into());
        }
    }
    if let Some(missing) = (0..first.count).find(|i| !seen.contains_key(i)) {
        return Err(Refused(format!("search {missing}/{} of the swarm is missing", first.count)).into());
    }
    let shortest = files
        .iter()
        .filter_map(|f| f.counterexample.as_ref().map(|c| (c.actions.len(), f.index, c)))
        .min_by_key(|&(steps, index, _)| (steps, index));
    // A search that stopped at its first violation was stopped by no bound, and did not explore every state.
    let complete = files.iter().any(|f| f.complete && f.counterexample.is_none());
    let merged = Merged {
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
        coverage: coverage::report(&files),
    };
    let text = serde_json::to_string_pretty(&merged)? + "\n";
    limits::write_file(out, "merged swarm result", text.as_bytes())?;
    if let (Some(path), Some((.., c))) = (save, shortest) {
        limits::write_file(path, "counterexample file", c.to_json().as_bytes())?;
    }
    if json {
        std::io::stdout().lock().write_all(text.as_bytes())?;
    } else {
        summary(&merged, shortest, save)?;
    }
    Ok(if merged.verdict == "held" { Outcome::Held } else { Outcome::Violated })
}

/// The merge in a few lines: the searches, what they covered, and the verdict.
fn summary(
    merged: &Merged<'_>,
    shortest: Option<(usize, u64, &CounterexampleFile)>,
    save: Option<&Path>,
) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    {
        writeln!(
            stdout,
            "merged {} searches of `elect check {}`: {} states and {} transitions in all",
            merged.searches,
            merged.check.join(" "),
            merged.states,
            merged.transitions
        )?;
        merged.coverage.print(&mut stdout, merged.states)?;
        match shortest {
            Some((steps, index, c)) => writeln!(
                stdout,
                "verdict     {} VIOLATED: {} ({steps} steps, found by search {index}{})",
                c.property,
                c.detail,
                save.map(|p| format!("; `elect sim --replay {}` re-runs it", p.display())).unwrap_or_default()
            )?,
            None if merged.complete => {
                writeln!(stdout, "verdict     held (a search explored every reachable state)")?;
            }
            None => writeln!(
                stdout,
                "verdict     no violation found (no search explored every state: evidence, not proof)"
            )?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_search_draws_its_own_order_and_names_its_own_file() {
        assert_ne!(seed_of(1, 0), seed_of(1, 1));
        assert_ne!(seed_of(1, 0), seed_of(2, 0));
        assert_eq!(seed_of(7, 3), seed_of(7, 3));
        let p = path(Path::new("/r/bully.json"), Shard { index: 2, count: 8 });
        assert_eq!(p, Path::new("/r/bully.swarm-2-of-8.json"));
    }

    #[test]
    fn a_search_s_arguments_leave_out_what_differs_between_searches() {
        let argv: Vec<String> =
            ["-a", "bully", "--swarm", "1/4", "--out", "r.json", "--timed"].map(String::from).to_vec();
        assert_eq!(member_args(&argv), ["-a", "bully", "--timed"]);
    }
}
