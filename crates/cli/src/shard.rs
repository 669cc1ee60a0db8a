//! Sharded sweeps on the command line: `--shard I/N` (or the index a batch scheduler gives an array job's copy),
//! shard files named and written atomically, and `elect merge`, which reads them and writes exactly the bytes of the
//! unsharded sweep. The file's format, the scheduler's variables and the merge are the simulator's
//! ([`elect_sim::shard`]).

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use elect_sim::Shard;
use elect_sim::shard::{ShardError, ShardFile};

use crate::limits::Limits;
use crate::outcome::{BadInput, Outcome, Refused};

/// Which shard this copy runs, and where that was read.
#[derive(Clone, Debug)]
pub(crate) struct Chosen {
    pub(crate) shard: Shard,
    pub(crate) from: String,
}

impl fmt::Display for Chosen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shard {}/{} (from {})", self.shard.index, self.shard.count, self.from)
    }
}

/// The shard to run: `--shard`, or else the array index a batch scheduler gives each copy of a job (Slurm, a
/// Kubernetes Indexed Job, AWS Batch), with `--shard-count` where the scheduler gives no count. `None`: the whole
/// sweep.
pub(crate) fn choose(
    flag: Option<Shard>,
    count: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Chosen>, BadInput> {
    if let Some(shard) = flag {
        return Ok(Some(Chosen { shard, from: "--shard".to_owned() }));
    }
    let chosen = Shard::from_scheduler(count, env).map_err(|e| BadInput(e.to_string()))?;
    Ok(chosen.map(|(shard, from)| Chosen { shard, from }))
}

/// Where a shard's file goes: beside `out` (or `sweep-DIGEST.csv` in the working directory), named after it and
/// the shard: `results.shard-3-of-7.csv`.
pub(crate) fn path(out: Option<&Path>, digest: &str, shard: Shard) -> PathBuf {
    let base = out.map_or_else(|| PathBuf::from(format!("sweep-{digest}.csv")), Path::to_path_buf);
    let stem = base.file_stem().map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
    let ext = base.extension().map_or_else(|| "csv".into(), |e| e.to_string_lossy().into_owned());
    base.with_file_name(format!("{stem}.shard-{}-of-{}.{ext}", shard.index, shard.count))
}

/// A file written whole or not at all: bytes go to a temporary file beside `path`, renamed over it at the end, so
/// that a copy retried by its scheduler overwrites and never leaves half a file.
pub(crate) struct Atomic {
    file: tempfile::NamedTempFile,
    path: PathBuf,
}

impl Atomic {
    pub(crate) fn create(path: &Path) -> anyhow::Result<Self> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let file = tempfile::Builder::new()
            .prefix(".elect-")
            .tempfile_in(dir)
            .with_context(|| format!("cannot create a file in {}", dir.display()))?;
        Ok(Self { file, path: path.to_path_buf() })
    }

    /// Another handle on the temporary file, to write through.
    pub(crate) fn writer(&self) -> anyhow::Result<std::fs::File> {
        Ok(self.file.as_file().try_clone()?)
    }

    pub(crate) fn commit(self) -> anyhow::Result<()> {
        let path = self.path;
        self.file.as_file().sync_all().with_context(|| format!("cannot write {}", path.display()))?;
        self.file.persist(&path).map_err(|e| e.error).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}

impl Write for Atomic {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// `elect merge`: the shards of a sweep, or the searches of a swarm.
#[derive(Args)]
pub(crate) struct MergeArgs {
    /// The merged CSV, byte for byte what the sweep writes unsharded; or, for a swarm, the merged result (JSON).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
    /// Every shard file of one sweep (written by `elect sweep --shard I/N`), or every result file of one swarm
    /// (written by `elect check --swarm I/N`), in any order.
    #[arg(required = true, value_name = "FILES")]
    pub(crate) shards: Vec<PathBuf>,
    /// A swarm's: save the shortest counterexample any search found to FILE; `elect sim --replay FILE` re-runs it.
    #[arg(long, value_name = "FILE")]
    pub(crate) save: Option<PathBuf>,
    /// A swarm's: print the merged result as JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The shard file at `path`, read within the command line's limits and checked.
fn read(path: &Path) -> anyhow::Result<ShardFile> {
    let text = Limits::cli().read_file(path, "shard file")?;
    ShardFile::parse(&path.display().to_string(), &text).map_err(refused)
}

fn refused(e: ShardError) -> anyhow::Error {
    match e {
        ShardError::Refused(e) => Refused(e).into(),
        ShardError::Invalid(e) => BadInput(e).into(),
    }
}

/// `elect merge`: checks that the shard files are of one sweep and hold every run once, and writes the sweep's CSV.
pub(crate) fn merge(args: &MergeArgs) -> anyhow::Result<Outcome> {
    if args.save.is_some() || args.json {
        return Err(BadInput("--save and --json are for merging a swarm's result files".to_owned()).into());
    }
    let files = args.shards.iter().map(|p| read(p)).collect::<anyhow::Result<Vec<_>>>()?;
    let (header, rows) = elect_sim::shard::merge(&files).map_err(refused)?;
    let mut out = Atomic::create(&args.out)?;
    let written = |e| anyhow::Error::from(e).context(format!("cannot write {}", args.out.display()));
    writeln!(out, "{header}").map_err(written)?;
    for row in &rows {
        writeln!(out, "{row}").map_err(written)?;
    }
    out.commit()?;
    eprintln!("merged {} shards, {} runs, into {}", files[0].shard.count, rows.len(), args.out.display());
    Ok(Outcome::Held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_comes_before_a_schedulers_variables() {
        let env = |name: &str| (name == "SLURM_ARRAY_TASK_ID").then(|| "4".to_owned());
        let chosen = choose(Some("2/5".parse().unwrap()), None, &env).unwrap().unwrap();
        assert_eq!((chosen.shard, chosen.from.as_str()), (Shard { index: 2, count: 5 }, "--shard"));
        let chosen = choose(None, Some(6), &env).unwrap().unwrap();
        assert_eq!(chosen.shard, Shard { index: 4, count: 6 });
    }

    #[test]
    fn a_shard_file_is_named_after_the_sweep_and_the_shard() {
        let s = Shard { index: 3, count: 7 };
        assert_eq!(path(Some(Path::new("out/results.csv")), "d", s), Path::new("out/results.shard-3-of-7.csv"));
        assert_eq!(path(None, "0123abcd", s), Path::new("sweep-0123abcd.shard-3-of-7.csv"));
    }
}
