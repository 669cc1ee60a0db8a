//! Sharded sweeps: `elect sweep --shard I/N` (or the index a batch scheduler gives an array job's copy), shard files
//! written atomically, and `elect merge`, which puts them back together into exactly the bytes of the unsharded
//! sweep.
//!
//! A shard file is the sweep's CSV with its share of the rows, after one first line that says which sweep and which
//! shard it is: `# elect sweep shard I/N of DIGEST, RUNS runs`. The digest is [`elect_sim::Sweep::digest`].

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::Context;
use clap::Args;
use elect_sim::Shard;

use crate::limits::Limits;
use crate::outcome::{BadInput, Outcome, Refused};

/// `--shard I/N`: shard I (from 0) of N.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShardArg(pub(crate) Shard);

impl FromStr for ShardArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("'{s}' is not I/N (shard I of N, I from 0)"))?;
        let parse = |v: &str, what: &str| v.trim().parse::<u64>().map_err(|_| format!("'{v}' is not a {what}"));
        let shard = Shard { index: parse(i, "shard index")?, count: parse(n, "shard count")? };
        check(shard)?;
        Ok(Self(shard))
    }
}

fn check(shard: Shard) -> Result<Shard, String> {
    if shard.count == 0 {
        return Err("a sweep splits into at least 1 shard, not 0".to_owned());
    }
    if shard.index >= shard.count {
        return Err(format!(
            "shard {} of {} does not exist: shards are numbered from 0 to {}",
            shard.index,
            shard.count,
            shard.count - 1
        ));
    }
    Ok(shard)
}

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
    flag: Option<ShardArg>,
    count: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Chosen>, BadInput> {
    if let Some(ShardArg(shard)) = flag {
        return Ok(Some(Chosen { shard, from: "--shard".to_owned() }));
    }
    let number = |name: &str| -> Result<Option<u64>, BadInput> {
        env(name)
            .map(|v| v.trim().parse::<u64>().map_err(|_| BadInput(format!("{name}={v} is not a number"))))
            .transpose()
    };
    let count_from = |name: &str, scheduler: &str| -> Result<(u64, String), BadInput> {
        match (count, number(name)?) {
            (Some(c), _) => Ok((c, "--shard-count".to_owned())),
            (None, Some(c)) => Ok((c, name.to_owned())),
            (None, None) => Err(BadInput(format!("{scheduler} gives no shard count here: pass --shard-count N"))),
        }
    };
    let (index, count, from) = if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        let (count, counted) = count_from("SLURM_ARRAY_TASK_COUNT", "Slurm")?;
        let index = id
            .checked_sub(min)
            .ok_or_else(|| BadInput(format!("SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}")))?
            / step;
        (index, count, format!("SLURM_ARRAY_TASK_ID={id}, minimum {min}, step {step}; count from {counted}"))
    } else if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        let (count, counted) = count_from("", "a Kubernetes Indexed Job")?;
        (index, count, format!("JOB_COMPLETION_INDEX={index}; count from {counted}"))
    } else if let Some(index) = number("AWS_BATCH_JOB_ARRAY_INDEX")? {
        let (count, counted) = count_from("AWS_BATCH_JOB_ARRAY_SIZE", "AWS Batch")?;
        (index, count, format!("AWS_BATCH_JOB_ARRAY_INDEX={index}; count from {counted}"))
    } else {
        return match count {
            Some(_) => Err(BadInput(
                "--shard-count needs an array index from a scheduler (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or \
                 AWS_BATCH_JOB_ARRAY_INDEX); or give --shard I/N"
                    .to_owned(),
            )),
            None => Ok(None),
        };
    };
    let shard = check(Shard { index, count }).map_err(|e| BadInput(format!("{e} ({from})")))?;
    Ok(Some(Chosen { shard, from }))
}

/// Where a shard's file goes: beside `out` (or `sweep-DIGEST.csv` in the working directory), named after it and
/// the shard: `results.shard-3-of-7.csv`.
pub(crate) fn path(out: Option<&Path>, digest: &str, shard: Shard) -> PathBuf {
    let base = out.map_or_else(|| PathBuf::from(format!("sweep-{digest}.csv")), Path::to_path_buf);
    let stem = base.file_stem().map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
    let ext = base.extension().map_or_else(|| "csv".into(), |e| e.to_string_lossy().into_owned());
    base.with_file_name(format!("{stem}.shard-{}-of-{}.{ext}", shard.index, shard.count))
}

/// The first line of a shard file.
pub(crate) fn first_line(digest: &str, shard: Shard, runs: u64) -> String {
    format!("# elect sweep shard {}/{} of {digest}, {runs} runs\n", shard.index, shard.count)
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

/// One shard file, read.
struct ShardFile {
    path: PathBuf,
    digest: String,
    shard: Shard,
    runs: u64,
    header: String,
    rows: Vec<String>,
}

fn read_shard(path: &Path) -> anyhow::Result<ShardFile> {
    let text = Limits::cli().read_file(path, "shard file")?;
    if text.trim().is_empty() {
        return Err(BadInput(format!("{} is empty: not a shard file of elect sweep", path.display())).into());
    }
    let not_one = || Refused(format!("{} is not a shard file of elect sweep", path.display()));
    let (first, rest) = text.split_once('\n').ok_or_else(not_one)?;
    let spec = first.strip_prefix("# elect sweep shard ").ok_or_else(not_one)?;
    let (shard, spec) = spec.split_once(" of ").ok_or_else(not_one)?;
    let (digest, runs) = spec.split_once(", ").ok_or_else(not_one)?;
    // A sweep has at least one run.
    let runs: u64 = runs.strip_suffix(" runs").and_then(|r| r.parse().ok()).filter(|&r| r > 0).ok_or_else(not_one)?;
    let ShardArg(shard) = shard.parse().map_err(|_| not_one())?;
    let mut lines = rest.lines();
    let header = lines.next().ok_or_else(not_one)?.to_owned();
    let rows: Vec<String> = lines.map(str::to_owned).collect();
    if rows.len() as u64 != shard.runs_of(runs) {
        return Err(Refused(format!(
            "{} holds {} runs where shard {}/{} of this sweep has {}: it is incomplete",
            path.display(),
            rows.len(),
            shard.index,
            shard.count,
            shard.runs_of(runs)
        ))
        .into());
    }
    Ok(ShardFile { path: path.to_path_buf(), digest: digest.to_owned(), shard, runs, header, rows })
}

/// `elect merge`: checks that the shard files are of one sweep and hold every run once, and writes the sweep's CSV.
pub(crate) fn merge(args: &MergeArgs) -> anyhow::Result<Outcome> {
    if args.save.is_some() || args.json {
        return Err(BadInput("--save and --json are for merging a swarm's result files".to_owned()).into());
    }
    let files = args.shards.iter().map(|p| read_shard(p)).collect::<anyhow::Result<Vec<_>>>()?;
    let first = &files[0];
    let mut by_index: BTreeMap<u64, &ShardFile> = BTreeMap::new();
    for f in &files {
        if (&f.digest, f.runs, f.shard.count) != (&first.digest, first.runs, first.shard.count) {
            return Err(Refused(format!(
                "{} is shard {}/{} of sweep {} ({} runs), not of sweep {} ({} runs, {} shards) as {} is",
                f.path.display(),
                f.shard.index,
                f.shard.count,
                f.digest,
                f.runs,
                first.digest,
                first.runs,
                first.shard.count,
                first.path.display()
            ))
            .into());
        }
        if f.header != first.header {
            return Err(
                Refused(format!("{} has another header than {}", f.path.display(), first.path.display())).into()
            );
        }
        if let Some(other) = by_index.insert(f.shard.index, f) {
            return Err(Refused(format!(
                "shard {}/{} is given twice: {} and {}",
                f.shard.index,
                f.shard.count,
                other.path.display(),
                f.path.display()
            ))
            .into());
        }
    }
    let count = first.shard.count;
    if let Some(missing) = (0..count).find(|i| !by_index.contains_key(i)) {
        return Err(Refused(format!("shard {missing}/{count} of sweep {} is missing", first.digest)).into());
    }
    let mut out = Atomic::create(&args.out)?;
    let written = |e| anyhow::Error::from(e).context(format!("cannot write {}", args.out.display()));
    writeln!(out, "{}", first.header).map_err(written)?;
    for i in 0..first.runs {
        let row = &by_index[&(i % count)].rows[(i / count) as usize];
        writeln!(out, "{row}").map_err(written)?;
    }
    out.commit()?;
    eprintln!("merged {count} shards, {} runs, into {}", first.runs, args.out.display());
    Ok(Outcome::Held)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    fn chosen(flag: Option<&str>, count: Option<u64>, vars: &'static [(&'static str, &'static str)]) -> Option<Shard> {
        choose(flag.map(|f| f.parse().unwrap()), count, &env(vars)).unwrap().map(|c| c.shard)
    }

    #[test]
    fn the_shard_comes_from_the_flag_or_from_each_schedulers_variables() {
        let shard = |index, count| Some(Shard { index, count });
        assert_eq!(chosen(None, None, &[]), None);
        assert_eq!(chosen(Some("2/5"), None, &[("SLURM_ARRAY_TASK_ID", "4")]), shard(2, 5), "the flag first");
        const SLURM: &[(&str, &str)] = &[
            ("SLURM_ARRAY_TASK_ID", "14"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(chosen(None, None, SLURM), shard(2, 4), "--array=10-16:2: task 14 is the third of four");
        assert_eq!(chosen(None, Some(7), &[("JOB_COMPLETION_INDEX", "6")]), shard(6, 7));
        let aws = &[("AWS_BATCH_JOB_ARRAY_INDEX", "0"), ("AWS_BATCH_JOB_ARRAY_SIZE", "3")];
        assert_eq!(chosen(None, None, aws), shard(0, 3));
    }

    #[test]
    fn a_scheduler_without_a_count_or_a_shard_out_of_range_is_refused() {
        let err = |count, vars| choose(None, count, &env(vars)).unwrap_err().0;
        assert!(err(None, &[("JOB_COMPLETION_INDEX", "1")]).contains("--shard-count"));
        assert!(err(Some(3), &[("AWS_BATCH_JOB_ARRAY_INDEX", "3")]).contains("numbered from 0 to 2"));
        assert!(err(Some(3), &[]).contains("needs an array index"));
        assert!(err(None, &[("SLURM_ARRAY_TASK_ID", "x")]).contains("not a number"));
        assert!("4/4".parse::<ShardArg>().unwrap_err().contains("does not exist"));
        assert!("0/0".parse::<ShardArg>().unwrap_err().contains("at least 1 shard"));
        assert!("3".parse::<ShardArg>().unwrap_err().contains("I/N"));
    }

    #[test]
    fn a_shard_file_is_named_after_the_sweep_and_the_shard() {
        let s = Shard { index: 3, count: 7 };
        assert_eq!(path(Some(Path::new("out/results.csv")), "d", s), Path::new("out/results.shard-3-of-7.csv"));
        assert_eq!(path(None, "0123abcd", s), Path::new("sweep-0123abcd.shard-3-of-7.csv"));
    }
}
