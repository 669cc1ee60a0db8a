//! What elect accepts: the one place that knows the limits on input sizes, input files, threads and memory, so
//! that no input can hang a command or take the machine's memory.
//!
//! [`Limits::cli`] holds the command line's defaults; each is documented in the `--help` of the flag that
//! raises it (`--max-nodes`, `--max-runs`, `--max-file-size`, `--max-memory`) and in the README. A service that
//! embeds elect would start from tighter ones. Two limits live beside the code they protect, because that code
//! reads its input itself: the size of a topology file (`elect_scenario::EdgeFile::MAX_BYTES`) and the caps per
//! topology (`elect_scenario`'s topology caps: complete graphs, stored graphs, geometric graphs by their expected links).

use std::io::Read;
use std::path::Path;

use crate::outcome::BadInput;

/// Limits on what one command may be asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The largest input file read (scenario, counterexample, sweep CSV), in bytes.
    pub(crate) file_bytes: u64,
    /// The most processes of one simulation (`elect sim`, and each run of `elect sweep`).
    pub(crate) sim_nodes: usize,
    /// The most processes the model checker explores (its states grow exponentially with them).
    pub(crate) check_nodes: usize,
    /// The most runs of one sweep.
    pub(crate) sweep_runs: u64,
    /// The most threads a command starts (`--threads`).
    pub(crate) threads: usize,
    /// The model checker's resident memory, in bytes; `None`: 4 GiB, or half of the machine's if that is less.
    pub(crate) check_memory: Option<u64>,
}

/// The model checker's default memory bound, at most (half of the machine's when that is less): a search that
/// needs more is one of hours, better bounded on purpose with --max-memory; and the rest of the machine stays free
/// for everything else.
pub(crate) const DEFAULT_CHECK_MEMORY: u64 = 4 << 30;

/// The command line's defaults.
pub(crate) const CLI: Limits = Limits {
    file_bytes: 64 << 20,
    sim_nodes: 1 << 22,
    check_nodes: 64,
    sweep_runs: 10_000_000,
    threads: 256,
    check_memory: None,
};

impl Limits {
    /// The command line's defaults.
    pub(crate) const fn cli() -> Self {
        CLI
    }

    /// The model checker's memory bound in bytes: the one given, or [`DEFAULT_CHECK_MEMORY`] or half of the
    /// machine's memory, whichever is less (the former alone where the machine does not say how much it has).
    pub(crate) fn check_memory(&self) -> Option<u64> {
        let default = machine_memory().map_or(DEFAULT_CHECK_MEMORY, |m| (m / 2).min(DEFAULT_CHECK_MEMORY));
        Some(self.check_memory.unwrap_or(default))
    }

    /// Refuses more than [`Limits::threads`] threads, and none.
    pub(crate) fn threads(&self, threads: Option<usize>) -> Result<Option<usize>, BadInput> {
        match threads {
            Some(0) => Err(BadInput("--threads must be at least 1".into())),
            Some(t) if t > self.threads => {
                Err(BadInput(format!("--threads {t} is more than the {} elect starts", self.threads)))
            }
            t => Ok(t),
        }
    }

    /// Refuses a run of more processes than `limit` allows, naming the flag that raises it.
    pub(crate) fn nodes(n: usize, limit: usize, what: &str) -> Result<(), BadInput> {
        if n > limit {
            return Err(BadInput(format!(
                "{n} processes is more than the {limit} {what} accepts (raise it with --max-nodes)"
            )));
        }
        Ok(())
    }

    /// Reads the text file at `path` (`what` names it in errors): a regular file only (not a device, a pipe or a
    /// directory), of at most [`Limits::file_bytes`], read with that bound whatever its size claims.
    pub(crate) fn read_file(&self, path: &Path, what: &str) -> Result<String, BadInput> {
        read_bounded(path, what, self.file_bytes)
    }

    /// Reads the scenario file at `path`, as [`Self::read_file`] does, of at most [`Limits::file_bytes`] over
    /// [`SCENARIO_SHARE`].
    pub(crate) fn read_scenario(&self, path: &Path) -> Result<String, BadInput> {
        let max = self.file_bytes / SCENARIO_SHARE;
        let raise = format!(
            "a scenario file may be 1/{SCENARIO_SHARE} of --max-file-size, as reading TOML takes about a hundred \
             times a file's size in memory; raise it with --max-file-size"
        );
        read_limited(path, "scenario file", max, &raise)
    }
}

/// The longest time limit a flag takes, in seconds (about 32 years): beyond it a limit means none, and the
/// deadline it sets must still be a time the clock can hold.
pub(crate) const MAX_SECONDS: f64 = 1e9;

/// A time limit in seconds, given as `flag`: a positive number of at most [`MAX_SECONDS`].
pub(crate) fn seconds(flag: &str, s: f64) -> Result<std::time::Duration, BadInput> {
    // 1e308 as 1e308, not as its 309 digits.
    let shown = if s.abs() >= 1e15 { format!("{s:e}") } else { s.to_string() };
    if !(s.is_finite() && s > 0.0) {
        return Err(BadInput(format!("{flag} must be a positive number of seconds, not {shown}")));
    }
    if s > MAX_SECONDS {
        return Err(BadInput(format!(
            "{flag} {shown} is more than the longest limit elect takes, {MAX_SECONDS:e} seconds (about 32 years)"
        )));
    }
    std::time::Duration::try_from_secs_f64(s).map_err(|e| BadInput(format!("{flag} {shown}: {e}")))
}

/// The share of [`Limits::file_bytes`] a scenario file may take: the TOML parser holds every token and value of
/// a file with its place in it, about 115 bytes of memory for each byte of a long list of ids (a file of 20 MB took
/// 2.3 GB to read), where JSON files are read into their values directly.
pub(crate) const SCENARIO_SHARE: u64 = 16;

/// Reads a regular file of at most `max` bytes as UTF-8 text.
pub(crate) fn read_bounded(path: &Path, what: &str, max: u64) -> Result<String, BadInput> {
    read_limited(path, what, max, "raise it with --max-file-size")
}

/// [`read_bounded`], saying `raise` of the limit when the file passes it.
fn read_limited(path: &Path, what: &str, max: u64, raise: &str) -> Result<String, BadInput> {
    let bad = |problem: String| BadInput(format!("the {what} {}: {problem}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(bad("not a regular file".into()));
    }
    let too_big = || bad(format!("larger than the limit of {} ({raise})", bytes(max)));
    if meta.len() > max {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let mut raw = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut raw).map_err(|e| bad(format!("cannot read it: {e}")))?;
    if raw.len() as u64 > max {
        return Err(too_big());
    }
    String::from_utf8(raw).map_err(|e| bad(format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
}

/// Opens `path` (the `what` in errors: "trace file") to write, created or truncated, without waiting for a reader:
/// a named pipe that nothing reads is refused at once instead of blocking the command for ever, and one that is
/// read (`--trace /dev/stdout` into a pipe) is written as a file is.
pub(crate) fn create(path: &Path, what: &str) -> Result<std::fs::File, BadInput> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
    }
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(nix::errno::Errno::ENXIO as i32) {
            return BadInput(format!(
                "cannot create the {what} {}: a named pipe that nothing reads (elect does not wait for a reader)",
                path.display()
            ));
        }
        BadInput(format!("cannot create the {what} {}: {e}", path.display()))
    })?;
    // Writes block again, as on any file.
    #[cfg(unix)]
    nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()))
        .map_err(|e| BadInput(format!("cannot write the {what} {}: {e}", path.display())))?;
    Ok(file)
}

/// Writes `text` to `path` through [`create`].
pub(crate) fn write_file(path: &Path, what: &str, text: &[u8]) -> Result<(), BadInput> {
    use std::io::Write;
    create(path, what)?
        .write_all(text)
        .map_err(|e| BadInput(format!("cannot write the {what} {}: {e}", path.display())))
}

/// Refuses, before any work, an output path (`flag`) that could not be written when the work is done: one whose
/// directory does not exist, one that is a directory, or (given `extensions`) one whose extension is none of them.
pub(crate) fn output_place(flag: &str, path: &Path, extensions: &[&str]) -> Result<(), BadInput> {
    let bad = |problem: String| BadInput(format!("{flag} {}: {problem}", path.display()));
    if !extensions.is_empty() {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        if !ext.is_some_and(|e| extensions.contains(&e.as_str())) {
            return Err(bad(format!("use a .{} file", extensions.join(" or ."))));
        }
    }
    if path.is_dir() {
        return Err(bad("a directory, where a file goes".into()));
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(bad(format!("no directory {} to write it in", dir.display())));
    }
    Ok(())
}

/// The machine's memory in bytes, from `/proc/meminfo` (`None` elsewhere).
pub(crate) fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A size in bytes as flags take it: a whole number with an optional binary suffix, `K`, `M`, `G` or `T` (`KiB`,
/// `MiB`, ... and `KB`, `MB`, ... are read the same way). Written here rather than taken from a crate: a dozen
/// lines, and the crates that parse sizes disagree on whether `M` means 10^6 or 2^20.
pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: u64 = number.parse().map_err(|_| format!("'{s}' is not a size (such as 512M or 4G)"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches('B').trim_end_matches('I') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("'{s}' is not a size: its unit is not K, M, G or T")),
    };
    number.checked_mul(1 << shift).filter(|&b| b > 0).ok_or_else(|| format!("'{s}' is not a size elect can use"))
}

/// `bytes` as a size to read: `64 MiB`.
pub(crate) fn bytes(b: u64) -> String {
    match b {
        _ if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        _ if b >= 1 << 20 => format!("{} MiB", b >> 20),
        _ if b >= 1 << 10 => format!("{} KiB", b >> 10),
        _ => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_bytes("512"), Ok(512));
        assert_eq!(parse_bytes("64K"), Ok(64 << 10));
        assert_eq!(parse_bytes("300M"), Ok(300 << 20));
        assert_eq!(parse_bytes("4GiB"), Ok(4 << 30));
        assert_eq!(parse_bytes("2 gb"), Ok(2 << 30));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("-1G").is_err());
        assert!(parse_bytes("1X").unwrap_err().contains("unit"));
        assert!(parse_bytes("99999999999T").is_err());
        assert_eq!(bytes(64 << 20), "64 MiB");
        assert_eq!(bytes(3 << 30), "3 GiB");
    }

    #[test]
    fn only_regular_files_are_read_and_only_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        std::fs::write(&small, "abc").unwrap();
        assert_eq!(read_bounded(&small, "file", 3).unwrap(), "abc");
        assert_eq!(read_bounded(&small, "file", u64::MAX).unwrap(), "abc", "no limit at all");
        assert!(read_bounded(&small, "file", 2).unwrap_err().0.contains("larger than the limit of 2 bytes"));
        assert!(read_bounded(dir.path(), "file", 3).unwrap_err().0.contains("not a regular file"));
        assert!(read_bounded(Path::new("/dev/zero"), "file", 3).unwrap_err().0.contains("not a regular file"));
        std::fs::write(&small, [0xff, 0xfe]).unwrap();
        assert!(read_bounded(&small, "file", 3).unwrap_err().0.contains("not UTF-8"));
        let limits = Limits::cli();
        assert_eq!(limits.threads(Some(4)).unwrap(), Some(4));
        assert!(limits.threads(Some(100_000)).unwrap_err().0.contains("more than the 256"));
        assert!(limits.threads(Some(0)).is_err());
    }
}
