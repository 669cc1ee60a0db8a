//! `elect list`: the algorithms.

use std::io::{self, Write};

use clap::Args;
use elect_algos::{Timing, registry};

use crate::Outcome;
use crate::table::Table;

#[derive(Args)]
pub(crate) struct ListArgs {
    /// Also show each algorithm's parameters.
    #[arg(long, short)]
    long: bool,
}

pub(crate) fn run(args: &ListArgs) -> anyhow::Result<Outcome> {
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
