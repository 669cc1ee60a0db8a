//! `elect list`: the algorithms, or the scenarios that ship with elect.

use std::io::{self, Write};

use clap::Args;
use elect_algos::{Timing, registry};

use crate::outcome::Outcome;
use crate::table::Table;

#[derive(Args)]
pub(crate) struct ListArgs {
    /// Also show each algorithm's parameters.
    #[arg(long, short)]
    long: bool,
    /// List the scenarios that ship with elect instead (run one with `elect sim --scenario NAME`).
    #[arg(long, conflicts_with = "long")]
    scenarios: bool,
}

pub(crate) fn run(args: &ListArgs) -> anyhow::Result<Outcome> {
    if args.scenarios {
        return scenarios();
    }
    let mut table = Table::new(vec!["ALGORITHM", "ALIASES", "TOPOLOGY", "TIMING", "SOURCES", "MODEL"]);
    for info in registry::all() {
        table.row(vec![
            info.name.to_owned(),
            info.aliases.join(","),
            info.needs.natural_topology().to_owned(),
            match info.timing {
                _ if elect_algos::runs_on_synchronizers(info.name) => "rounds (T), or async on a synchronizer",
                Timing::Asynchronous => "async",
                Timing::Synchronous => "sync (T)",
            }
            .to_owned(),
            info.seed.to_owned(),
            info.model.to_owned(),
        ]);
    }
    let mut out = io::stdout().lock();
    table.write(&mut out)?;
    writeln!(
        out,
        "\nAlgorithms written in rounds run in lock-step rounds of length T, or on an asynchronous network with \
         --synchronizer {}.",
        elect_algos::synchronizers::Spec::SYNTAX
    )?;
    writeln!(
        out,
        "Sources S000-S004: docs/reference/bibliography.md; each algorithm's chapter: docs/reference/algorithms/<name>.md."
    )?;
    if args.long {
        for info in registry::all() {
            writeln!(out, "\n{} ({})", info.name, info.title)?;
            writeln!(out, "  docs/reference/algorithms/{}.md", info.name)?;
            if info.params.is_empty() {
                writeln!(out, "  no parameters")?;
            }
            for p in info.params {
                let default = if p.default.is_empty() { "none" } else { p.default };
                writeln!(out, "  --param {}={}  (default {default})\n      {}", p.name, p.values, p.help)?;
            }
        }
    }
    Ok(Outcome::Held)
}

/// The scenarios that ship with elect, each with its description.
fn scenarios() -> anyhow::Result<Outcome> {
    let mut table = Table::new(vec!["SCENARIO", "WHAT IT SHOWS"]);
    for preset in crate::presets::presets().into_iter().filter(|p| p.params[0].0 == "scenario") {
        table.row(vec![preset.name, preset.title]);
    }
    let mut out = io::stdout().lock();
    table.write(&mut out)?;
    writeln!(out, "\nRun one with `elect sim --scenario NAME`, or check it with `elect check --scenario NAME`.")?;
    Ok(Outcome::Held)
}
