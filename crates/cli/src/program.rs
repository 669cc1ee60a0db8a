//! Programs as algorithms: the flags that bound a program's answers in time (`--program-timeout`) and in size
//! (`--program-max-line`), handed to the lab, which starts `--algorithm exec:./ring.py` as a child process
//! ([`elect_lab::program`]).

use std::time::Duration;

use elect_lab::program::ProgramLimits;

use crate::outcome::BadInput;

/// The flags every command shares for programs.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct ProgramArgs {
    /// With `--algorithm exec:PROGRAM`: how long the program may take to answer one step, in milliseconds, before
    /// elect stops it and says which step it was (its first answer, as it starts, may take 10 s at least).
    #[arg(long, global = true, value_name = "MS", default_value_t = 10_000)]
    program_timeout: u64,
    /// With `--algorithm exec:PROGRAM`: the longest line the program may answer with, in bytes (K, M suffixes).
    #[arg(long, global = true, value_name = "BYTES", default_value = "1M")]
    program_max_line: String,
}

/// Checks the flags and lets `exec:` name programs.
pub(crate) fn install(args: &ProgramArgs) -> Result<(), BadInput> {
    if !(1..=3_600_000).contains(&args.program_timeout) {
        return Err(BadInput(format!("--program-timeout {}: from 1 to 3600000 ms", args.program_timeout)));
    }
    let max_line = crate::limits::parse_bytes(&args.program_max_line)
        .map_err(|e| BadInput(format!("--program-max-line {}: {e}", args.program_max_line)))?;
    if !(1024..=256 << 20).contains(&max_line) {
        return Err(BadInput(format!("--program-max-line {}: from 1K to 256M", args.program_max_line)));
    }
    let limits = ProgramLimits { timeout: Duration::from_millis(args.program_timeout), max_line: max_line as usize };
    elect_lab::program::install(limits);
    Ok(())
}

/// Stops a command whose program failed, before it reports a run that stopped at the failure: the error names the
/// program, the step, the process, the event and the steps before it.
pub(crate) fn stop_if_failed() -> Result<(), BadInput> {
    match elect_algos::program::first_failure() {
        Some(failure) => Err(BadInput(failure.to_string())),
        None => Ok(()),
    }
}
