//! `elect grade`: the assignment file read, graded by `elect_grade`, and the report written as text, JSON or JUnit
//! XML (what autograders read).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use elect_grade::{Assignment, Refusal};

use crate::outcome::{BadInput, Outcome};

#[derive(Args)]
#[command(after_help = "\
An assignment file, in TOML:

  title = \"Chang-Roberts on a one-way ring\"
  reference = \"chang-roberts\"        # a built-in algorithm, or the teacher's exec:PROGRAM
  [simulate]
  sizes = [8, 64, 256]
  arrangements = 20                  # hidden id arrangements per size
  secret = 40213                     # the seeds come from it: keep it from students
  bound = \"n*(n+1)/2 + n\"            # the most messages a run may send
  same-leader = true                 # the reference's leader, on every run (default true)
  [check]
  sizes = [3, 4, 5]                  # every interleaving, one arrangement per size
  network = \"fifo\"                   # fifo or unordered
  crashes = 0

Exit status: 0 when every case passed, 1 when one failed, 2 for bad input.")]
pub(crate) struct GradeArgs {
    /// The assignment file (TOML; see below).
    assignment: PathBuf,
    /// The student's program: exec:PROGRAM (or any algorithm, to grade a built-in one).
    #[arg(long, short = 'p')]
    program: String,
    /// The report's form: text for people, json for scripts, junit for CI test reports (JUnit XML). The exit
    /// status says whether every case passed, which is what an autograder that runs a command reads.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
    Junit,
}

/// `elect grade`.
pub(crate) fn run(args: &GradeArgs) -> anyhow::Result<Outcome> {
    let text = crate::limits::read_bounded(&args.assignment, "assignment", 1 << 20)?;
    let path = args.assignment.display();
    let refused = |e: Refusal| match e {
        Refusal::Assignment(e) => BadInput(format!("{path}: {e}")),
        e @ Refusal::Reference { .. } => BadInput(e.to_string()),
    };
    let assignment = Assignment::from_toml(&text).map_err(refused)?;
    crate::program::from_file(&args.assignment, assignment.reference())?;
    let report = elect_grade::grade(&assignment, &args.program).map_err(refused)?;
    let text = match args.format {
        Format::Text => report.text(),
        Format::Json => report.json(),
        Format::Junit => report.junit(),
    };
    match &args.out {
        Some(path) => crate::limits::write_file(path, "report", text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(if report.passed() { Outcome::Held } else { Outcome::Violated })
}
