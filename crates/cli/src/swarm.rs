//! `elect check --swarm I/N` and `elect merge` of a swarm's result files: which search this is (`--swarm I/N`, or a
//! batch scheduler's array index, as a sweep's shard is chosen), its result file written beside `--out`, and the
//! merge written and printed. The search, the file's format, the merge and its estimate of coverage are the
//! checker's ([`elect_check::swarm`]): a search that completed is a proof, the others evidence whose extent the
//! merge estimates.

use std::io::Write;
use std::path::{Path, PathBuf};

use elect_check::CheckConfig;
use elect_check::swarm::{Merged, SwarmError, SwarmFile};
use elect_sim::Shard;

use crate::limits::{self, Limits};
use crate::outcome::Refused;
use crate::outcome::{BadInput, Outcome};
use crate::shard::{self, Atomic, Chosen};

mod coverage;

/// Which search of the swarm this is: `--swarm I/N`, or `--swarm array` and the scheduler's array index.
pub(crate) fn choose(flag: &str, count: Option<u64>) -> anyhow::Result<Chosen> {
    let given = if flag == "array" { None } else { Some(flag.parse::<Shard>().map_err(BadInput)?) };
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
pub(crate) fn run(config: CheckConfig, chosen: &Chosen, out: &Path, argv: &[String]) -> anyhow::Result<Outcome> {
    let Shard { index, count } = chosen.shard;
    crate::limits::output_place("--out", &path(out, chosen.shard), &[])?;
    let seed = elect_check::swarm::swarm_seed(config.sim.seed, index);
    eprintln!("search {index}/{count} of a swarm (from {}), seed {seed}", chosen.from);
    let file =
        elect_check::swarm::search(config, index, count, member_args(argv)).map_err(|e| BadInput(e.to_string()))?;
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

/// The result file at `path`, read within the command line's limits and checked.
fn read(path: &Path) -> anyhow::Result<SwarmFile> {
    let text = Limits::cli().read_file(path, "swarm result file")?;
    SwarmFile::parse(&path.display().to_string(), &text).map_err(|e| match e {
        SwarmError::Refused(e) => Refused(e).into(),
        SwarmError::Invalid(e) => BadInput(e).into(),
    })
}

/// `elect merge` of swarm result files: checks they are the searches of one swarm, each once, and writes the merge.
pub(crate) fn merge(paths: &[PathBuf], out: &Path, save: Option<&Path>, json: bool) -> anyhow::Result<Outcome> {
    let files = paths.iter().map(|p| read(p)).collect::<anyhow::Result<Vec<_>>>()?;
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let merged = elect_check::swarm::merge(&files, &names).map_err(|e| Refused(e.to_string()))?;
    let text = serde_json::to_string_pretty(&merged)? + "\n";
    limits::write_file(out, "merged swarm result", text.as_bytes())?;
    if let (Some(path), Some(c)) = (save, merged.counterexample) {
        limits::write_file(path, "counterexample file", c.to_json().as_bytes())?;
    }
    if json {
        std::io::stdout().lock().write_all(text.as_bytes())?;
    } else {
        summary(&merged, save)?;
    }
    Ok(if merged.verdict == "held" { Outcome::Held } else { Outcome::Violated })
}

/// The merge in a few lines: the searches, what they covered, and the verdict.
fn summary(merged: &Merged<'_>, save: Option<&Path>) -> anyhow::Result<()> {
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
        coverage::print(&merged.coverage, &mut stdout, merged.states)?;
        match merged.counterexample.zip(merged.found_by) {
            Some((c, index)) => writeln!(
                stdout,
                "verdict     {} VIOLATED: {} ({} steps, found by search {index}{})",
                c.property,
                c.detail,
                c.actions.len(),
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
    fn each_search_names_its_own_file() {
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
