//! `elect sim --replay FILE`: a counterexample saved by `elect check --save`, re-run step by step with every state
//! judged as the checker judged it.

use std::io::{self, Write};
use std::path::Path;

use clap::{CommandFactory, FromArgMatches};
use elect_check::{CounterexampleFile, Replay};

use crate::check::{Recheck, viewer};
use crate::limits::Limits;
use crate::outcome::{BadInput, Outcome};

/// `elect sim --replay FILE`: re-runs a saved counterexample step by step, judging every state.
pub(crate) fn replay(
    path: &Path,
    json: bool,
    html: Option<&Path>,
    labels: &elect_viz::Labels,
    limits: &Limits,
) -> anyhow::Result<Outcome> {
    let bad = |what: String| BadInput(format!("{}: {what}", path.display()));
    let text = limits.read_file(path, "counterexample file")?;
    let file = CounterexampleFile::parse(&text).map_err(|e| bad(e.to_string()))?;
    let recheck = crate::hyphen_values(Recheck::command())
        .try_get_matches_from(&file.check)
        .and_then(|m| Recheck::from_arg_matches(&m))
        .map_err(|e| {
            // One line, whatever clap has to say (a `--help` among them would be the whole help).
            let first = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    "--help and --version are not arguments of a check".to_owned()
                }
                _ => crate::usage_error(&e.to_string())
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
                    .to_owned(),
            };
            bad(format!("its check arguments: {first}"))
        })?;
    // The file is input like any other: its arguments may not raise the limits of the command that reads it.
    // Nor may they start a program the command line did not name: checked before anything is built from them, as
    // building starts the program (a --scenario among them is checked as it is read).
    if let Some(algorithm) = &recheck.args.scenario_args.algorithm {
        crate::program::from_file(path, algorithm)?;
    }
    let config = recheck.args.bounded_by(limits).config()?;
    let r = elect_check::replay(&config, &file.actions).map_err(|e| bad(e.to_string()))?;
    if !r.properties.contains(&file.property.as_str()) {
        return Err(bad(format!(
            "its property: {} promises no property '{}' (it promises {})",
            r.algorithm,
            file.property,
            r.properties.join(", ")
        ))
        .into());
    }
    if let Some(out) = html {
        viewer(out, &config, &r, file.loop_start, labels)?;
    }
    let mut out = io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &r)?;
        writeln!(out)?;
    } else {
        replay_text(&mut out, &r, &file)?;
    }
    let broken = !r.last.is_empty() || r.steps.iter().any(|s| !s.violations.is_empty());
    Ok(if broken { Outcome::Violated } else { Outcome::Held })
}

fn replay_text(out: &mut impl Write, r: &Replay, file: &CounterexampleFile) -> io::Result<()> {
    writeln!(out, "replaying   {} ({} steps): elect check {}", r.algorithm, r.steps.len(), file.check.join(" "))?;
    let show = |s: &elect_core::Status| {
        let leader = s.leader.map_or_else(|| "-".to_owned(), |l| l.to_string());
        format!("{:?} leader {leader}", s.state).to_lowercase()
    };
    for fault in &r.start_faults {
        writeln!(out, "  start     {fault}")?;
    }
    for (id, s) in &r.initial {
        writeln!(out, "  start     {id}: {}", show(s))?;
    }
    for m in &r.in_flight {
        writeln!(out, "  start     in flight: {} from {} to {}", m.msg, m.from, m.to)?;
    }
    for (i, s) in r.steps.iter().enumerate() {
        if file.loop_start == Some(i) {
            writeln!(out, "  --- the cycle, which can repeat for ever:")?;
        }
        writeln!(out, "  {:>3}. {}", i + 1, s.step)?;
        for (id, st) in &s.changed {
            writeln!(out, "         {id}: {}", show(st))?;
        }
        for v in &s.violations {
            writeln!(out, "         VIOLATED {v}")?;
        }
    }
    if r.last.is_empty() {
        writeln!(out, "end         every promised property holds in the last state: the violation did not reproduce")?;
    } else {
        for v in &r.last {
            writeln!(out, "end         VIOLATED {v}")?;
        }
    }
    Ok(())
}
