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
    /// Let a file given to this command (a --scenario file, a counterexample to --replay) start this program,
    /// which it names as its algorithm (exec:PROGRAM; repeat for several): elect starts no program a file names
    /// unless the command line names it too.
    #[arg(long, global = true, value_name = "exec:PROGRAM")]
    allow_program: Vec<String>,
}

/// The programs files may name ([`ProgramArgs::allow_program`], and those `elect serve` was started with).
static ALLOWED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Lets files name `program`.
pub(crate) fn allow(program: &str) {
    ALLOWED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(program.to_owned());
}

/// [`from_file`] for a scenario file's `text`, read from `file`, before anything is built from it.
pub(crate) fn from_scenario_file(file: &std::path::Path, text: &str) -> Result<(), BadInput> {
    elect_scenario::ScenarioFile::algorithm(text).map_or(Ok(()), |algorithm| from_file(file, &algorithm))
}

/// Refuses a file (`file`) whose algorithm, `algorithm`, is a program the command line did not name: reading a
/// file must not run what it says.
pub(crate) fn from_file(file: &std::path::Path, algorithm: &str) -> Result<(), BadInput> {
    let allowed = ALLOWED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !elect_algos::program::is_program(algorithm) || allowed.iter().any(|p| p == algorithm) {
        return Ok(());
    }
    Err(BadInput(format!(
        "{}: it names the program {algorithm} as its algorithm, and elect starts no program a file names: \
         give --allow-program {algorithm} to run it",
        file.display()
    )))
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
    args.allow_program.iter().for_each(|p| allow(p));
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
