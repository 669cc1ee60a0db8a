//! A sweep split into shards: which shard a copy of a batch job runs (a flag `I/N`, or the array index a scheduler
//! gives), the first line that names a shard's file, and the merge that puts the shards' rows back into exactly the
//! bytes of the unsharded sweep.
//!
//! A shard file is the sweep's CSV with its share of the rows (run `i` is shard `i mod N`'s, [`Shard::has`]),
//! after one first line that says which sweep and which shard it is: `# elect sweep shard I/N of DIGEST, RUNS runs`.
//! The digest is [`Sweep::digest`](crate::Sweep::digest). Reading and writing the files is the caller's: this
//! module parses texts and returns rows.

use std::collections::BTreeMap;
use std::str::FromStr;

/// Why files cannot be merged, or a text is not a shard file.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not a shard file, or not of this sweep, or incomplete, or a shard given twice or missing: the files given
    /// are not one sweep's.
    #[error("{0}")]
    Refused(String),
    /// An empty file, a bad flag or a scheduler's variable that is not a number.
    #[error("{0}")]
    Invalid(String),
}

/// A share of a sweep: shard `index` of `count` runs the runs whose position in the output is `index` mod
/// `count`. A run's seed and result depend on its key (algorithm, synchronizer, size, seed) alone, so they do not
/// depend on how the sweep is sharded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// From 0.
    pub index: u64,
    /// At least 1.
    pub count: u64,
}

impl Shard {
    /// The whole sweep.
    pub const ALL: Self = Self { index: 0, count: 1 };

    /// Whether the run at position `i` of the output is this shard's.
    pub fn has(self, i: u64) -> bool {
        i % self.count == self.index
    }

    /// How many of `total` runs are this shard's.
    pub fn runs_of(self, total: u64) -> u64 {
        if self.index >= total { 0 } else { (total - self.index).div_ceil(self.count) }
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `I/N`: shard I (from 0) of N.
    fn from_str(s: &str) -> Result<Self, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("'{s}' is not I/N (shard I of N, I from 0)"))?;
        let parse = |v: &str, what: &str| v.trim().parse::<u64>().map_err(|_| format!("'{v}' is not a {what}"));
        Self::new(parse(i, "shard index")?, parse(n, "shard count")?)
    }
}

impl Shard {
    /// Shard `index` of `count`, if it exists.
    pub fn new(index: u64, count: u64) -> Result<Self, String> {
        if count == 0 {
            return Err("a sweep splits into at least 1 shard, not 0".to_owned());
        }
        if index >= count {
            return Err(format!(
                "shard {index} of {count} does not exist: shards are numbered from 0 to {}",
                count - 1
            ));
        }
        Ok(Self { index, count })
    }

    /// The array index a batch scheduler gives each copy of a job (Slurm, a Kubernetes Indexed Job, AWS Batch),
    /// read through `env`, with `count` where the scheduler gives no count; with the words that say where it was
    /// read. `None` when no scheduler's index is set and no `count` is given.
    pub fn from_scheduler(
        count: Option<u64>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<(Self, String)>, ShardError> {
        let invalid = ShardError::Invalid;
        let number = |name: &str| -> Result<Option<u64>, ShardError> {
            env(name)
                .map(|v| v.trim().parse::<u64>().map_err(|_| invalid(format!("{name}={v} is not a number"))))
                .transpose()
        };
        let count_from = |name: &str, scheduler: &str| -> Result<(u64, String), ShardError> {
            match (count, number(name)?) {
                (Some(c), _) => Ok((c, "--shard-count".to_owned())),
                (None, Some(c)) => Ok((c, name.to_owned())),
                (None, None) => Err(invalid(format!("{scheduler} gives no shard count here: pass --shard-count N"))),
            }
        };
        let (index, count, from) = if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
            let (count, counted) = count_from("SLURM_ARRAY_TASK_COUNT", "Slurm")?;
            let index = id
                .checked_sub(min)
                .ok_or_else(|| invalid(format!("SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}")))?
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
                Some(_) => Err(invalid(
                    "--shard-count needs an array index from a scheduler (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX \
                     or AWS_BATCH_JOB_ARRAY_INDEX); or give --shard I/N"
                        .to_owned(),
                )),
                None => Ok(None),
            };
        };
        let shard = Self::new(index, count).map_err(|e| invalid(format!("{e} ({from})")))?;
        Ok(Some((shard, from)))
    }
}

/// The first line of a shard file.
pub fn first_line(digest: &str, shard: Shard, runs: u64) -> String {
    format!("# elect sweep shard {}/{} of {digest}, {runs} runs\n", shard.index, shard.count)
}

/// One shard file, parsed.
#[derive(Debug)]
pub struct ShardFile {
    /// What names it in errors (its path).
    pub name: String,
    /// The sweep's digest.
    pub digest: String,
    /// Which shard it is.
    pub shard: Shard,
    /// The runs of the whole sweep.
    pub runs: u64,
    /// The CSV's header line.
    pub header: String,
    /// Its rows, in order.
    pub rows: Vec<String>,
}

impl ShardFile {
    /// The shard file `text` holds, checked to hold its shard's every row; `name` names it in the errors.
    pub fn parse(name: &str, text: &str) -> Result<Self, ShardError> {
        if text.trim().is_empty() {
            return Err(ShardError::Invalid(format!("{name} is empty: not a shard file of elect sweep")));
        }
        let not_one = || ShardError::Refused(format!("{name} is not a shard file of elect sweep"));
        let (first, rest) = text.split_once('\n').ok_or_else(not_one)?;
        let spec = first.strip_prefix("# elect sweep shard ").ok_or_else(not_one)?;
        let (shard, spec) = spec.split_once(" of ").ok_or_else(not_one)?;
        let (digest, runs) = spec.split_once(", ").ok_or_else(not_one)?;
        // A sweep has at least one run.
        let runs: u64 =
            runs.strip_suffix(" runs").and_then(|r| r.parse().ok()).filter(|&r| r > 0).ok_or_else(not_one)?;
        let shard: Shard = shard.parse().map_err(|_| not_one())?;
        let mut lines = rest.lines();
        let header = lines.next().ok_or_else(not_one)?.to_owned();
        let rows: Vec<String> = lines.map(str::to_owned).collect();
        if rows.len() as u64 != shard.runs_of(runs) {
            return Err(ShardError::Refused(format!(
                "{name} holds {} runs where shard {}/{} of this sweep has {}: it is incomplete",
                rows.len(),
                shard.index,
                shard.count,
                shard.runs_of(runs)
            )));
        }
        Ok(Self { name: name.to_owned(), digest: digest.to_owned(), shard, runs, header, rows })
    }
}

/// The header and the rows of the sweep whose shards are `files`, in the order the unsharded sweep writes them;
/// the files must be the shards of one sweep, each once.
pub fn merge(files: &[ShardFile]) -> Result<(&str, Vec<&str>), ShardError> {
    let Some(first) = files.first() else { return Err(ShardError::Refused("no shard file to merge".to_owned())) };
    let mut by_index: BTreeMap<u64, &ShardFile> = BTreeMap::new();
    for f in files {
        if (&f.digest, f.runs, f.shard.count) != (&first.digest, first.runs, first.shard.count) {
            return Err(ShardError::Refused(format!(
                "{} is shard {}/{} of sweep {} ({} runs), not of sweep {} ({} runs, {} shards) as {} is",
                f.name,
                f.shard.index,
                f.shard.count,
                f.digest,
                f.runs,
                first.digest,
                first.runs,
                first.shard.count,
                first.name
            )));
        }
        if f.header != first.header {
            return Err(ShardError::Refused(format!("{} has another header than {}", f.name, first.name)));
        }
        if let Some(other) = by_index.insert(f.shard.index, f) {
            return Err(ShardError::Refused(format!(
                "shard {}/{} is given twice: {} and {}",
                f.shard.index, f.shard.count, other.name, f.name
            )));
        }
    }
    let count = first.shard.count;
    if let Some(missing) = (0..count).find(|i| !by_index.contains_key(i)) {
        return Err(ShardError::Refused(format!("shard {missing}/{count} of sweep {} is missing", first.digest)));
    }
    let rows = (0..first.runs).map(|i| by_index[&(i % count)].rows[(i / count) as usize].as_str()).collect();
    Ok((&first.header, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    fn chosen(count: Option<u64>, vars: &'static [(&'static str, &'static str)]) -> Option<Shard> {
        Shard::from_scheduler(count, &env(vars)).unwrap().map(|(shard, _)| shard)
    }

    #[test]
    fn the_shard_comes_from_each_schedulers_variables() {
        let shard = |index, count| Some(Shard { index, count });
        assert_eq!(chosen(None, &[]), None);
        const SLURM: &[(&str, &str)] = &[
            ("SLURM_ARRAY_TASK_ID", "14"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(chosen(None, SLURM), shard(2, 4), "--array=10-16:2: task 14 is the third of four");
        assert_eq!(chosen(Some(7), &[("JOB_COMPLETION_INDEX", "6")]), shard(6, 7));
        let aws = &[("AWS_BATCH_JOB_ARRAY_INDEX", "0"), ("AWS_BATCH_JOB_ARRAY_SIZE", "3")];
        assert_eq!(chosen(None, aws), shard(0, 3));
    }

    #[test]
    fn a_scheduler_without_a_count_or_a_shard_out_of_range_is_refused() {
        let err = |count, vars| Shard::from_scheduler(count, &env(vars)).unwrap_err().to_string();
        assert!(err(None, &[("JOB_COMPLETION_INDEX", "1")]).contains("--shard-count"));
        assert!(err(Some(3), &[("AWS_BATCH_JOB_ARRAY_INDEX", "3")]).contains("numbered from 0 to 2"));
        assert!(err(Some(3), &[]).contains("needs an array index"));
        assert!(err(None, &[("SLURM_ARRAY_TASK_ID", "x")]).contains("not a number"));
        assert!("4/4".parse::<Shard>().unwrap_err().contains("does not exist"));
        assert!("0/0".parse::<Shard>().unwrap_err().contains("at least 1 shard"));
        assert!("3".parse::<Shard>().unwrap_err().contains("I/N"));
    }

    #[test]
    fn shards_merge_into_the_rows_of_the_whole_sweep_in_its_order() {
        // Five runs in two shards: shard 0 has runs 0, 2 and 4; shard 1 has runs 1 and 3.
        let text = |i: u64, rows: &[&str]| {
            format!("{}h\n{}\n", first_line("d", Shard { index: i, count: 2 }, 5), rows.join("\n"))
        };
        let zero = ShardFile::parse("a", &text(0, &["r0", "r2", "r4"])).unwrap();
        let one = ShardFile::parse("b", &text(1, &["r1", "r3"])).unwrap();
        assert_eq!(merge(&[one, zero]).unwrap(), ("h", vec!["r0", "r1", "r2", "r3", "r4"]));
        let short = ShardFile::parse("b", &text(1, &["r1"])).unwrap_err();
        assert!(matches!(short, ShardError::Refused(m) if m.contains("incomplete")));
        let zero = ShardFile::parse("a", &text(0, &["r0", "r2", "r4"])).unwrap();
        let again = ShardFile::parse("c", &text(0, &["r0", "r2", "r4"])).unwrap();
        assert_eq!(merge(&[zero, again]).unwrap_err(), ShardError::Refused("shard 0/2 is given twice: a and c".into()));
        assert!(matches!(ShardFile::parse("e", " \n"), Err(ShardError::Invalid(_))));
    }
}
