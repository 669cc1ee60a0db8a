//! How a command ends: the outcome of one that ran ([`Outcome`]), bad input ([`BadInput`]), files that cannot be
//! merged ([`Refused`]), and the exit status and message each gives ([`exit_status`]).
//!
//! Exit status: 0 when every checked property held, 1 when one was violated, 2 for bad input, 130 when stopped by
//! Ctrl-C or SIGTERM.

use std::io::{self, Write};
use std::process::ExitCode;

/// Bad input: printed as one line, exit status 2.
#[derive(Debug)]
pub(crate) struct BadInput(pub(crate) String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Files that cannot be merged (the shards of a sweep, the searches of a swarm): exit status 1, with the file or
/// shard named.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// How a command ended, when it did not fail.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every checked property held.
    Held,
    /// Some property was violated.
    Violated,
    /// Stopped by Ctrl-C or SIGTERM before the end (exit status 130).
    Interrupted,
}

/// A line of an error message as it is printed: every word longer than [`elect_scenario::shorten`] keeps cut, and the
/// whole line at most a few hundred characters, so that no input is repeated back at length.
pub(crate) fn short_line(line: &str) -> String {
    let words: Vec<String> = line.split(' ').map(|w| elect_scenario::shorten(w).into_owned()).collect();
    elect_scenario::shorten_to(&words.join(" "), 400).into_owned()
}

/// The exit status of a command that returned `result`, with its error printed as one short line.
pub(crate) fn exit_status(result: anyhow::Result<Outcome>) -> ExitCode {
    match result {
        Ok(Outcome::Held) => ExitCode::SUCCESS,
        Ok(Outcome::Violated) => ExitCode::from(1),
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(e)
            if e.chain()
                .any(|c| c.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) if e.downcast_ref::<Refused>().is_some() => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
        Err(e) => {
            let _ = io::stdout().flush();
            let message = e.chain().map(ToString::to_string).collect::<Vec<_>>().join(": ");
            eprintln!("error: {}", message.lines().map(short_line).collect::<Vec<_>>().join("\n"));
            ExitCode::from(2)
        }
    }
}
