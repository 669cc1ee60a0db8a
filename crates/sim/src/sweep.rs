//! Parameter sweeps: many runs (algorithms × sizes × seeds) in parallel on every core, one CSV row each.

use std::fmt;
use std::io::Write;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use elect_algos::lookup;
use elect_algos::synchronizers::Spec;
use rayon::prelude::*;
use serde::Serialize;

use elect_scenario::{ConfigError, MAX_NODES, Scenario, SimConfig, Time};

use crate::report::Report;
use crate::shard::Shard;
use crate::{SimError, simulate};

/// Process counts: a list of sizes and doubling ranges, e.g. `8..1048576` (8, 16, ..., 1048576) or `10,100,1000`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(pub Vec<usize>);

/// Process counts that do not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// A part that is not a process count.
    #[error("malformed sizes '{text}': '{part}' is not a process count between 1 and {MAX_NODES}")]
    NotACount {
        /// The sizes.
        text: String,
        /// The part.
        part: String,
    },
    /// A range whose end is below its start.
    #[error("malformed sizes '{text}': the range {part} is empty")]
    EmptyRange {
        /// The sizes.
        text: String,
        /// The range.
        part: String,
    },
}

impl FromStr for Sizes {
    type Err = SizeError;
    fn from_str(s: &str) -> Result<Self, SizeError> {
        let number = |v: &str| {
            v.trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| (1..=MAX_NODES).contains(&n))
                .ok_or_else(|| SizeError::NotACount { text: s.to_owned(), part: v.to_owned() })
        };
        let mut sizes = Vec::new();
        for part in s.split(',') {
            match part.split_once("..") {
                Some((from, to)) => {
                    let (mut n, to) = (number(from)?, number(to)?);
                    if n > to {
                        return Err(SizeError::EmptyRange { text: s.to_owned(), part: part.to_owned() });
                    }
                    while n <= to {
                        sizes.push(n);
                        n *= 2;
                    }
                }
                None => sizes.push(number(part)?),
            }
        }
        sizes.sort_unstable();
        sizes.dedup();
        Ok(Self(sizes))
    }
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.iter().map(ToString::to_string).collect::<Vec<_>>().join(","))
    }
}

/// A sweep: every algorithm at every size with every seed, the rest of each run as in `template`.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// Algorithm names.
    pub algorithms: Vec<String>,
    /// Process counts.
    pub sizes: Sizes,
    /// Seeds `1..=seeds`.
    pub seeds: u64,
    /// The synchronizers to run each algorithm written in rounds on (`None`: lock-step, or as it is for the
    /// others, which run once); empty: the template's.
    pub synchronizers: Vec<Option<Spec>>,
    /// Everything else (ids, initiators, delays): `algorithm`, `nodes` and `seed` are replaced per run.
    pub template: SimConfig,
}

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The algorithm's canonical name.
    pub algorithm: &'static str,
    /// The synchronizer it ran on, if any.
    pub synchronizer: Option<String>,
    /// `n`.
    pub n: usize,
    /// The seed.
    pub seed: u64,
    /// All messages.
    pub messages: u64,
    /// Messages delivered to a live process.
    #[serde(skip)]
    pub delivered: u64,
    /// Messages per kind, in the algorithm's order.
    pub by_kind: Vec<(&'static str, u64)>,
    /// When the last process learned the leader.
    pub elected_at: Option<Time>,
    /// When the winner declared itself.
    pub declared_at: Option<Time>,
    /// The time of the last event.
    pub end_time: Time,
    /// The headline bound's formula.
    pub bound: Option<String>,
    /// Its value for this run.
    pub bound_value: Option<u64>,
    /// Its measured count.
    pub bound_measured: Option<u64>,
    /// On a synchronizer: the set-up's messages.
    pub setup_messages: Option<u64>,
    /// On a synchronizer: the pulses taken.
    pub pulses: Option<u32>,
    /// On a synchronizer: from the first pulse to the last.
    pub pulse_time: Option<Time>,
    /// Whether every checked property held.
    pub ok: bool,
}

impl Row {
    fn new(r: &Report, cfg: &SimConfig) -> Self {
        let bound = r.bounds.first();
        Self {
            algorithm: r.algorithm,
            synchronizer: cfg.synchronizer.map(|s| s.to_string()),
            n: r.nodes,
            seed: r.seed,
            messages: r.messages.total,
            delivered: r.delivered,
            by_kind: r.messages.by_kind.clone(),
            elected_at: r.elected_at,
            declared_at: r.declared_at,
            end_time: r.end_time,
            bound: bound.map(|b| b.name.clone()),
            bound_value: bound.map(|b| b.value),
            bound_measured: bound.map(|b| b.measured),
            setup_messages: r.synchronizer.as_ref().map(|s| s.setup_messages),
            pulses: r.synchronizer.as_ref().map(|s| s.pulses),
            pulse_time: r.synchronizer.as_ref().map(|s| s.pulse_time),
            ok: r.ok(),
        }
    }
}

/// Progress of a sweep: work done and total, where a run of `n` processes weighs `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepProgress {
    /// Runs finished.
    pub runs: u64,
    /// Total runs.
    pub total_runs: u64,
    /// Processes simulated in finished runs.
    pub work: u64,
    /// Processes in all runs.
    pub total_work: u64,
}

/// What a streamed sweep hands over, in order: the message kinds of its algorithms once (the CSV's columns), then
/// every row in output order.
#[derive(Debug)]
pub enum Streamed<'a> {
    /// Every message kind of the sweep's algorithms, in order of first appearance.
    Kinds(&'a [&'static str]),
    /// The next row.
    Row(Box<Row>),
}

impl Sweep {
    /// Each algorithm (canonical name) with each synchronizer it runs on, in output order.
    fn groups(&self) -> Result<Vec<(&'static str, Option<Spec>)>, ConfigError> {
        if self.algorithms.is_empty() || self.sizes.0.is_empty() || self.seeds == 0 {
            return Err(ConfigError::EmptySweep);
        }
        let synchronizers =
            if self.synchronizers.is_empty() { vec![self.template.synchronizer] } else { self.synchronizers.clone() };
        let mut groups = Vec::new();
        for name in &self.algorithms {
            let info = lookup(name)?;
            for &synchronizer in &synchronizers {
                // An algorithm not written in rounds runs once, as it is.
                if synchronizer.is_none() || elect_algos::runs_on_synchronizers(info.name) {
                    groups.push((info.name, synchronizer));
                }
            }
        }
        Ok(groups)
    }

    /// The number of runs, `None` if it does not fit in a `u64`.
    pub fn runs(&self) -> Result<Option<u64>, ConfigError> {
        let groups = self.groups()?.len() as u64;
        Ok(groups.checked_mul(self.sizes.0.len() as u64).and_then(|g| g.checked_mul(self.seeds)))
    }

    /// The processes of every run together (saturating), the measure of a sweep's progress.
    pub fn work(&self) -> Result<u64, ConfigError> {
        let groups = self.groups()?.len() as u64;
        let per_seed: u64 = self.sizes.0.iter().map(|&n| n as u64).sum();
        Ok(per_seed.saturating_mul(self.seeds).saturating_mul(groups))
    }

    /// The processes of every run of `shard` together (saturating).
    pub fn work_of(&self, shard: Shard) -> Result<u64, ConfigError> {
        if shard == Shard::ALL {
            return self.work();
        }
        let groups = self.groups()?.len() as u64;
        let per_group = (self.sizes.0.len() as u64).saturating_mul(self.seeds);
        let all = per_group.saturating_mul(groups);
        let mut work = 0u64;
        let mut i = shard.index;
        while i < all {
            work = work.saturating_add(self.sizes.0[((i % per_group) / self.seeds) as usize] as u64);
            i = i.saturating_add(shard.count);
        }
        Ok(work)
    }

    /// Checks every combination of algorithm, synchronizer and size (a size too large for a topology, say), so that
    /// a bad one fails before any long run starts.
    pub fn check(&self) -> Result<(), ConfigError> {
        let groups = self.groups()?;
        for g in 0..groups.len() {
            for s in 0..self.sizes.0.len() {
                Scenario::check(&self.config(&groups, g, s, 1))?;
            }
        }
        Ok(())
    }

    /// The run of group `g`, size number `s`, seed `seed`.
    fn config(&self, groups: &[(&'static str, Option<Spec>)], g: usize, s: usize, seed: u64) -> SimConfig {
        let mut cfg = self.template.clone();
        cfg.algorithm = groups[g].0.to_owned();
        cfg.synchronizer = groups[g].1;
        cfg.nodes = self.sizes.0[s];
        cfg.seed = seed;
        cfg
    }

    /// The run at position `i` of the output.
    fn nth(&self, groups: &[(&'static str, Option<Spec>)], i: u64) -> SimConfig {
        let per_group = self.sizes.0.len() as u64 * self.seeds;
        let (g, within) = (i / per_group, i % per_group);
        self.config(groups, g as usize, (within / self.seeds) as usize, within % self.seeds + 1)
    }

    /// A digest of everything that decides the sweep's runs and their order, so that the shards of one sweep can be
    /// told from another's.
    pub fn digest(&self) -> String {
        let spec = format!("elect {} {:?}", env!("CARGO_PKG_VERSION"), self);
        blake3::hash(spec.as_bytes()).to_hex()[..16].to_owned()
    }

    /// Runs the sweep's `shard` on `threads` threads (all cores if `None`), calling `progress` after each run, and
    /// hands `sink` the message kinds, then the shard's rows in output order as they come. Runs go a window at a
    /// time (a few per thread), so memory does not grow with the number of runs. The first run of each algorithm
    /// names its message kinds, so every shard runs those (and keeps the rows of its own).
    pub fn stream<E: From<SimError>>(
        &self,
        shard: Shard,
        threads: Option<usize>,
        progress: &(dyn Fn(SweepProgress) + Sync),
        sink: &mut dyn FnMut(Streamed<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.check().map_err(SimError::Config)?;
        let groups = self.groups().map_err(SimError::Config)?;
        let all_runs = self.runs().map_err(SimError::Config)?.ok_or(SimError::Config(ConfigError::SweepTooLarge))?;
        let total_runs = shard.runs_of(all_runs);
        let total_work = self.work_of(shard).map_err(SimError::Config)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.unwrap_or(0))
            .build()
            .map_err(|e| SimError::Config(ConfigError::Threads(e.to_string())))?;
        let (runs, work) = (AtomicU64::new(0), AtomicU64::new(0));
        let one = |i: u64| -> Result<Row, SimError> {
            let cfg = self.nth(&groups, i);
            let report = simulate(&cfg, None)?;
            let n = cfg.nodes as u64;
            if shard.has(i) {
                progress(SweepProgress {
                    runs: runs.fetch_add(1, Ordering::Relaxed) + 1,
                    total_runs,
                    work: work.fetch_add(n, Ordering::Relaxed) + n,
                    total_work,
                });
            }
            Ok(Row::new(&report, &cfg))
        };
        let window = (pool.current_num_threads() as u64 * 32).max(64);
        let per_group = all_runs / groups.len() as u64;
        // The first run of each group names its message kinds: those runs go first, and the header before them.
        let firsts: Vec<u64> = (0..groups.len() as u64).map(|g| g * per_group).collect();
        let mut first_rows: Vec<Option<Row>> = pool.install(|| {
            firsts.par_iter().with_max_len(1).map(|&i| one(i).map(Some)).collect::<Result<_, SimError>>()
        })?;
        let mut kinds: Vec<&'static str> = Vec::new();
        for (kind, _) in first_rows.iter().flatten().flat_map(|r| &r.by_kind) {
            if !kinds.contains(kind) {
                kinds.push(kind);
            }
        }
        sink(Streamed::Kinds(&kinds))?;
        let mut start = 0;
        while start < all_runs {
            let end = start.saturating_add(window.saturating_mul(shard.count)).min(all_runs);
            // Every item is a whole simulation: one per task, so that an idle thread can always steal.
            let window: Vec<u64> = (start..end).filter(|&i| shard.has(i)).collect();
            let rows: Vec<Option<Row>> = pool.install(|| {
                window
                    .par_iter()
                    .with_max_len(1)
                    .map(|&i| if firsts.binary_search(&i).is_ok() { Ok(None) } else { one(i).map(Some) })
                    .collect::<Result<_, SimError>>()
            })?;
            for (&i, row) in window.iter().zip(rows) {
                let row = match row {
                    Some(row) => row,
                    None => first_rows[(i / per_group) as usize].take().expect("each first row once"),
                };
                sink(Streamed::Row(Box::new(row)))?;
            }
            start = end;
        }
        Ok(())
    }

    /// Runs the sweep (see [`Sweep::stream`]) and collects its rows, in output order whatever order the runs
    /// finish in.
    pub fn run(&self, threads: Option<usize>, progress: &(dyn Fn(SweepProgress) + Sync)) -> Result<Vec<Row>, SimError> {
        let mut rows = Vec::new();
        self.stream(Shard::ALL, threads, progress, &mut |item| {
            if let Streamed::Row(row) = item {
                rows.push(*row);
            }
            Ok::<(), SimError>(())
        })?;
        Ok(rows)
    }
}

/// Writes `rows` as CSV: fixed columns, then one column per message kind of any algorithm (empty where an
/// algorithm has no such kind).
pub fn write_csv(rows: &[Row], out: impl Write) -> Result<(), csv::Error> {
    let mut kinds: Vec<&'static str> = Vec::new();
    for (kind, _) in rows.iter().flat_map(|r| &r.by_kind) {
        if !kinds.contains(kind) {
            kinds.push(kind);
        }
    }
    let mut w = CsvWriter::new(out, kinds)?;
    for r in rows {
        w.write(r)?;
    }
    w.finish()
}

/// The sweep CSV's columns before the message kinds. Each name carries its unit: `n_processes`, `messages_total`
/// and `messages_KIND` count, `_t` is simulated time (the units of `--delay`).
pub const COLUMNS_FIRST: [&str; 5] = ["algorithm", "synchronizer", "n_processes", "seed", "messages_total"];

/// The sweep CSV's columns after the message kinds.
pub const COLUMNS_LAST: [&str; 10] = [
    "elected_at_t",
    "declared_at_t",
    "end_t",
    "bound",
    "bound_value_messages",
    "bound_measured_messages",
    "setup_messages",
    "pulses",
    "pulse_span_t",
    "ok",
];

/// The column of messages of kind `kind`.
pub fn kind_column(kind: &str) -> String {
    format!("messages_{kind}")
}

/// A sweep's CSV written row by row: the header first, from the message kinds of every algorithm.
pub struct CsvWriter<W: Write> {
    w: csv::Writer<W>,
    kinds: Vec<&'static str>,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header: fixed columns, with one column per kind in `kinds`.
    pub fn new(out: W, kinds: Vec<&'static str>) -> Result<Self, csv::Error> {
        let mut w = csv::Writer::from_writer(out);
        let mut header: Vec<String> = COLUMNS_FIRST.iter().map(|c| (*c).to_owned()).collect();
        header.extend(kinds.iter().map(|k| kind_column(k)));
        header.extend(COLUMNS_LAST.iter().map(|c| (*c).to_owned()));
        w.write_record(&header)?;
        Ok(Self { w, kinds })
    }

    /// Writes one row (empty where its algorithm has no such kind).
    pub fn write(&mut self, r: &Row) -> Result<(), csv::Error> {
        let opt = |v: Option<String>| v.unwrap_or_default();
        let mut record = vec![
            r.algorithm.to_owned(),
            opt(r.synchronizer.clone()),
            r.n.to_string(),
            r.seed.to_string(),
            r.messages.to_string(),
        ];
        for kind in &self.kinds {
            record.push(opt(r.by_kind.iter().find(|(k, _)| k == kind).map(|(_, c)| c.to_string())));
        }
        record.push(opt(r.elected_at.map(|t| t.to_string())));
        record.push(opt(r.declared_at.map(|t| t.to_string())));
        record.push(r.end_time.to_string());
        record.push(opt(r.bound.clone()));
        record.push(opt(r.bound_value.map(|v| v.to_string())));
        record.push(opt(r.bound_measured.map(|v| v.to_string())));
        record.push(opt(r.setup_messages.map(|v| v.to_string())));
        record.push(opt(r.pulses.map(|v| v.to_string())));
        record.push(opt(r.pulse_time.map(|v| v.to_string())));
        record.push(r.ok.to_string());
        self.w.write_record(&record)
    }

    /// Flushes what is buffered.
    pub fn finish(mut self) -> Result<(), csv::Error> {
        self.w.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elect_scenario::Ids;

    #[test]
    fn sizes_are_lists_and_doubling_ranges() {
        assert_eq!("8..64".parse::<Sizes>().unwrap(), Sizes(vec![8, 16, 32, 64]));
        assert_eq!("10,3..12,10".parse::<Sizes>().unwrap(), Sizes(vec![3, 6, 10, 12]));
        assert!("64..8".parse::<Sizes>().unwrap_err().to_string().contains("empty"));
        assert!("0..8".parse::<Sizes>().unwrap_err().to_string().contains("'0' is not a process count"));
        assert!("8..x".parse::<Sizes>().unwrap_err().to_string().contains("'x'"));
    }

    #[test]
    fn a_sweep_runs_every_combination_and_keeps_its_order_whatever_the_threads() {
        let mut template = SimConfig::new("chang-roberts", 1);
        template.ids = Ids::Random;
        let sweep = Sweep {
            algorithms: vec!["cr".into(), "peterson".into()],
            sizes: "4..32".parse().unwrap(),
            seeds: 3,
            synchronizers: Vec::new(),
            template,
        };
        let calls = AtomicU64::new(0);
        let rows = sweep
            .run(Some(2), &|p| {
                calls.fetch_add(1, Ordering::Relaxed);
                assert!(p.runs <= p.total_runs && p.work <= p.total_work);
            })
            .unwrap();
        assert_eq!(rows.len(), 2 * 4 * 3);
        assert_eq!(calls.into_inner(), 24);
        assert_eq!((rows[0].algorithm, rows[0].n, rows[0].seed), ("chang-roberts", 4, 1));
        assert_eq!((rows[23].algorithm, rows[23].n, rows[23].seed), ("peterson", 32, 3));
        assert!(rows.iter().all(|r| r.ok));
        assert_eq!(rows, sweep.run(Some(1), &|_| {}).unwrap(), "one thread or two, same rows");
        let mut csv = Vec::new();
        write_csv(&rows, &mut csv).unwrap();
        let text = String::from_utf8(csv).unwrap();
        let header = text.lines().next().unwrap();
        assert_eq!(
            header,
            "algorithm,synchronizer,n_processes,seed,messages_total,messages_token,messages_elected,messages_one,\
             messages_two,messages_leader,elected_at_t,declared_at_t,end_t,bound,bound_value_messages,\
             bound_measured_messages,setup_messages,pulses,pulse_span_t,ok"
        );
        assert!(text.lines().nth(1).unwrap().starts_with("chang-roberts,,4,1,"));
        assert_eq!(text.lines().count(), 25);
    }

    #[test]
    fn a_sweep_compares_synchronizers_on_a_graph_family() {
        let mut template = SimConfig::new("floodmax", 1);
        template.ids = Ids::Random;
        template.topology = Some("random-regular:3".parse().unwrap());
        let sweep = Sweep {
            algorithms: vec!["floodmax".into()],
            sizes: "8..32".parse().unwrap(),
            seeds: 2,
            synchronizers: vec![None, Some(Spec::Alpha), Some(Spec::Beta { root: None })],
            template,
        };
        let rows = sweep.run(Some(2), &|_| {}).unwrap();
        assert_eq!(rows.len(), 3 * 3 * 2);
        assert!(rows.iter().all(|r| r.ok));
        let labels: Vec<Option<&str>> = rows.iter().step_by(6).map(|r| r.synchronizer.as_deref()).collect();
        assert_eq!(labels, [None, Some("alpha"), Some("beta")]);
        for (lockstep, alpha) in rows[..6].iter().zip(&rows[6..12]) {
            assert_eq!(alpha.messages, 3 * lockstep.messages, "alpha: 6mD against 2mD");
            assert_eq!((lockstep.pulses, alpha.setup_messages), (None, Some(0)));
        }
        assert!(rows[12..].iter().all(|r| r.setup_messages.unwrap() > 0 && r.pulse_time.is_some()));
        let mut csv = Vec::new();
        write_csv(&rows, &mut csv).unwrap();
        let text = String::from_utf8(csv).unwrap();
        assert!(text.lines().nth(7).unwrap().starts_with("floodmax,alpha,8,1,"), "{text}");
    }

    #[test]
    fn a_bad_combination_is_refused_before_anything_runs() {
        let sweep = Sweep {
            algorithms: vec!["bully".into()],
            sizes: "8..8192".parse().unwrap(),
            seeds: 1,
            synchronizers: Vec::new(),
            template: SimConfig::new("bully", 1),
        };
        let err = sweep.check().unwrap_err();
        assert!(err.to_string().contains("complete graphs of up to 4096"), "{err}");
        let unknown = Sweep { algorithms: vec!["paxos".into()], ..sweep };
        assert!(unknown.check().unwrap_err().to_string().contains("unknown algorithm"));
    }
}
