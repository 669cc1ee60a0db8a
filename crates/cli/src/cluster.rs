//! `elect cluster`: N `elect node` processes on loopback; the leader killed (SIGKILL) or paused (SIGSTOP) again and
//! again, and the time until every survivor reports the same new leader and epoch.
//!
//! The members are child processes of this executable, each with a port the OS chose, a data directory of its own
//! and the same seed. One thread per member reads its stdout lines (one per leadership change) and stamps each on
//! arrival with a monotonic clock. A round: the cluster is stable (every member reports the same leader `L` and
//! epoch `e`, and nothing changed for a quiet period); `L` is killed or stopped at `t0`; the round ends at the
//! arrival `t1` of the line that makes every survivor report the same leader other than `L` with an epoch above
//! `e`; `t1 - t0` is the sample. `L` is then restarted with the same data directory (or continued) and the next
//! round waits for the cluster to be stable again.
//!
//! Every line is checked: two members named leader in the same epoch is a double leader (exit 1). A member that
//! claims leadership under an epoch lower than the highest granted so far (a paused leader that resumes still
//! believing it leads) is a stale claim: fencing makes it harmless to a store that checks epochs, so it is
//! reported and counted, not a failure.
//!
//! Children are killed on every way out: the end of the run, an error, a panic (a drop guard), Ctrl-C and SIGTERM.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use elect_core::{NodeId, epoch};
use elect_net::NodeConfig;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::table::Table;
use crate::{BadInput, Outcome};

/// The most members a loopback cluster may have.
const MAX_NODES: u32 = 64;
/// Tries at starting the cluster when a member could not bind the port chosen for it.
const START_TRIES: u32 = 3;

#[derive(Args)]
pub(crate) struct ClusterArgs {
    /// How many members (2 to 64), with ids 1 to N.
    #[arg(long, short)]
    nodes: u32,
    /// The election algorithm: bully, garcia-molina, invitation, or a ring algorithm.
    #[arg(long, short)]
    algorithm: String,
    /// An algorithm parameter, given to every member (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// The leader's heartbeat period, in milliseconds. Members run with `--delay-bound-ms T --heartbeat 2`, where
    /// T = MS/2 (an odd MS is rounded up to the next even number): the leader sends a heartbeat every 2·T and a
    /// follower suspects it after 4·T (two periods) without one. The default, 10 ms, gives T = 5 ms.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    heartbeat: u64,
    /// Kill the leader with SIGKILL this many times, restarting it each time with its data directory (the
    /// default, with 10 rounds, when neither this nor --pause-leader is given).
    #[arg(long, value_name = "ROUNDS", conflicts_with = "pause_leader")]
    kill_leader: Option<u32>,
    /// Pause the leader with SIGSTOP this many times, continuing it (SIGCONT) once the others agree on another.
    #[arg(long, value_name = "ROUNDS")]
    pause_leader: Option<u32>,
    /// A round that does not end within this many milliseconds fails (the run goes on, and exits with 1).
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    round_timeout: u64,
    /// The seed of every member's timer jitter (`elect node --seed`), so runs repeat as far as real time allows.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep the members' data directories and logs in DIR (DIR/ID and DIR/ID.log) instead of a temporary
    /// directory removed at the end. Existing state files there are reused.
    #[arg(long, value_name = "DIR")]
    keep_data: Option<PathBuf>,
    /// Authenticate the members' packets with the cluster key derived from this file (`elect node --key-file`).
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Print one JSON object (the figures and the raw samples) instead of the table.
    #[arg(long)]
    json: bool,
}

/// What is done to the leader in each round.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
enum Fault {
    /// SIGKILL, then a restart with the same data directory.
    Kill,
    /// SIGSTOP, then SIGCONT.
    Pause,
}

/// The validated run.
struct Plan {
    nodes: u32,
    algorithm: &'static str,
    params: Vec<String>,
    heartbeat_ms: u64,
    /// `T`, in milliseconds.
    delay_bound_ms: u64,
    fault: Fault,
    rounds: u32,
    round_timeout: Duration,
    /// How long nothing may change before the cluster counts as stable.
    quiet: Duration,
    seed: u64,
    cluster: String,
    /// Every member's `--key-file`.
    key_file: Option<PathBuf>,
}

/// Every check that can be made before a process is spawned.
fn plan(args: &ClusterArgs) -> Result<Plan, BadInput> {
    if !(2..=MAX_NODES).contains(&args.nodes) {
        return Err(BadInput(format!("--nodes must be between 2 and {MAX_NODES}, not {}", args.nodes)));
    }
    if args.heartbeat == 0 {
        return Err(BadInput("--heartbeat must be at least 1 ms".into()));
    }
    if args.round_timeout == 0 {
        return Err(BadInput("--round-timeout must be at least 1 ms".into()));
    }
    #[cfg(not(unix))]
    if args.pause_leader.is_some() {
        return Err(BadInput("--pause-leader needs SIGSTOP and SIGCONT, which this platform does not have".into()));
    }
    let delay_bound_ms = args.heartbeat.div_ceil(2);
    // The configuration of member 1, with the others at placeholder addresses: the runtime's own checks.
    let mut config = NodeConfig::new(NodeId(1), loopback(1), &args.algorithm, "unused");
    for id in 2..=args.nodes {
        config.peers.insert(NodeId(id), loopback(id as u16));
    }
    config.params =
        elect_algos::Params::parse(args.params.iter().map(String::as_str)).map_err(|e| BadInput(e.to_string()))?;
    config.delay_bound = Duration::from_millis(delay_bound_ms);
    config.heartbeat = 2;
    let info = config.validate().map_err(|e| match e {
        elect_net::ConfigError::DelayBound(_) => {
            BadInput(format!("--heartbeat {} ms is out of range (2 ms to 120 s)", args.heartbeat))
        }
        e => BadInput(e.to_string()),
    })?;
    elect_algos::dispatch(info.name, &config.params, CheckMembers(config.members()))
        .map_err(|e| BadInput(e.to_string()))?
        .map_err(|e| BadInput(e.to_string()))?;
    if let Some(path) = &args.key_file {
        elect_net::ClusterKey::from_file(path).map_err(|e| BadInput(e.to_string()))?;
    }
    let (fault, rounds) = match (args.kill_leader, args.pause_leader) {
        (_, Some(rounds)) => (Fault::Pause, rounds),
        (Some(rounds), None) => (Fault::Kill, rounds),
        (None, None) => (Fault::Kill, 10),
    };
    Ok(Plan {
        nodes: args.nodes,
        algorithm: info.name,
        params: args.params.clone(),
        heartbeat_ms: 2 * delay_bound_ms,
        delay_bound_ms,
        fault,
        rounds,
        round_timeout: Duration::from_millis(args.round_timeout),
        quiet: Duration::from_millis((20 * delay_bound_ms).max(100)),
        seed: args.seed,
        cluster: format!("elect-cluster-{}", std::process::id()),
        key_file: args.key_file.clone(),
    })
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// Checks an algorithm's parameters against the member ids.
struct CheckMembers(Vec<NodeId>);

impl elect_algos::Driver for CheckMembers {
    type Output = Result<(), elect_algos::ParamError>;

    fn drive<A: elect_algos::Algorithm>(self, algorithm: A) -> Self::Output {
        algorithm.validate(&self.0)
    }
}

pub(crate) fn run(args: &ClusterArgs) -> anyhow::Result<Outcome> {
    let plan = plan(args)?;
    let exe = std::env::current_exe().context("cannot find the elect executable")?;
    let data = Data::new(args.keep_data.as_deref())?;
    let (events, inbox) = mpsc::channel();
    watch_for_interrupts(events.clone());
    let mut bench = Bench::new(&plan, exe, data.path(), events, inbox);
    let result = bench.run();
    // Every child is killed and reaped before the report is printed and before the data directory is removed.
    bench.fleet.stop_all();
    let report = bench.report(result, data.path());
    drop(bench);
    drop(data);
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        report.write_text(&mut out)?;
    }
    out.flush()?;
    Ok(if report.stopped == Some(Stopped::Interrupted) {
        Outcome::Interrupted
    } else if report.failed_rounds.is_empty() && report.double_leaders.is_empty() && report.stopped.is_none() {
        Outcome::Held
    } else {
        Outcome::Violated
    })
}

/// Where the members keep their state and logs: a temporary directory removed at the end, or a kept one.
enum Data {
    Temporary(tempfile::TempDir),
    Kept(PathBuf),
}

impl Data {
    fn new(keep: Option<&Path>) -> anyhow::Result<Self> {
        Ok(match keep {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| BadInput(format!("cannot create --keep-data {}: {e}", dir.display())))?;
                Self::Kept(dir.to_owned())
            }
            None => Self::Temporary(
                tempfile::Builder::new()
                    .prefix("elect-cluster-")
                    .tempdir()
                    .context("cannot create a temporary directory")?,
            ),
        })
    }

    fn path(&self) -> &Path {
        match self {
            Self::Temporary(dir) => dir.path(),
            Self::Kept(dir) => dir,
        }
    }
}

/// What the reader threads and the interrupt watcher tell the main loop.
enum Event {
    /// A line on a member's stdout, stamped on arrival.
    Line { member: usize, generation: u32, at: Instant, line: String },
    /// A member's stdout closed: the process ended.
    Closed { member: usize, generation: u32 },
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

/// Set on Ctrl-C or SIGTERM: a member that ends at that moment was interrupted too (a Ctrl-C at a terminal reaches
/// the members as well).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Sends [`Event::Interrupted`] on Ctrl-C or SIGTERM, from a thread of its own.
fn watch_for_interrupts(events: Sender<Event>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    std::thread::spawn(move || {
        runtime.block_on(crate::node::shutdown_signal());
        INTERRUPTED.store(true, Ordering::SeqCst);
        let _ = events.send(Event::Interrupted);
    });
}

/// What a member's latest line said.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct View {
    leader: Option<u32>,
    epoch: u64,
}

/// Whether a member's process runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Life {
    Running,
    Paused,
    Dead,
}

/// One member: its address, its directory, and its current process.
struct Member {
    id: u32,
    addr: SocketAddr,
    dir: PathBuf,
    log: PathBuf,
    child: Option<Child>,
    /// Counts the processes started for this member; lines of earlier ones do not update `latest`.
    generation: u32,
    life: Life,
    /// The latest line of the current process (`None` until it prints one).
    latest: Option<View>,
}

/// The member processes. Dropping it kills and reaps every one of them.
struct Fleet {
    exe: PathBuf,
    members: Vec<Member>,
    /// Every process id ever started, for the report.
    pids: Vec<u32>,
    events: Sender<Event>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.stop_all();
    }
}

impl Fleet {
    /// Kills and reaps every member process.
    fn stop_all(&mut self) {
        for i in 0..self.members.len() {
            self.stop(i);
        }
    }

    /// Kills and reaps member `i`'s process (SIGKILL ends a stopped process too).
    fn stop(&mut self, i: usize) {
        let m = &mut self.members[i];
        if let Some(mut child) = m.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        m.life = Life::Dead;
    }

    /// Starts member `i`'s process (again), with stdout read by a thread of its own and stderr appended to its log.
    fn spawn(&mut self, i: usize, plan: &Plan) -> anyhow::Result<()> {
        let peers: Vec<String> = self
            .members
            .iter()
            .filter(|p| p.id != self.members[i].id)
            .map(|p| format!("{}={}", p.id, p.addr))
            .collect();
        let m = &mut self.members[i];
        std::fs::create_dir_all(&m.dir).with_context(|| format!("cannot create {}", m.dir.display()))?;
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&m.log)
            .with_context(|| format!("cannot open {}", m.log.display()))?;
        let mut cmd = Command::new(&self.exe);
        cmd.arg("node").args(["--id", &m.id.to_string(), "--listen", &m.addr.to_string()]);
        for peer in &peers {
            cmd.args(["--peer", peer]);
        }
        cmd.args(["--algorithm", plan.algorithm]);
        for param in &plan.params {
            cmd.args(["--param", param]);
        }
        cmd.arg("--data-dir").arg(&m.dir);
        cmd.args(["--cluster", &plan.cluster, "--seed", &plan.seed.to_string()]);
        cmd.args(["--delay-bound-ms", &plan.delay_bound_ms.to_string(), "--heartbeat", "2"]);
        if let Some(key) = &plan.key_file {
            cmd.arg("--key-file").arg(key);
        }
        // The member keeps reading a pipe whose other end only this process holds: if it dies, even by SIGKILL,
        // the members see the end of their input and shut down instead of living on as orphans.
        cmd.arg("--stop-on-stdin-close");
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start member {}", m.id))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        m.generation += 1;
        m.life = Life::Running;
        m.latest = None;
        self.pids.push(child.id());
        m.child = Some(child);
        let (events, generation) = (self.events.clone(), m.generation);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let at = Instant::now();
                let Ok(line) = line else { break };
                if events.send(Event::Line { member: i, generation, at, line }).is_err() {
                    return;
                }
            }
            let _ = events.send(Event::Closed { member: i, generation });
        });
        Ok(())
    }

    /// Sends SIGSTOP or SIGCONT to member `i`.
    #[cfg(unix)]
    fn signal(&mut self, i: usize, signal: nix::sys::signal::Signal) -> anyhow::Result<()> {
        let m = &mut self.members[i];
        let child = m.child.as_ref().context("the member has no process")?;
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).context("a process id out of range")?);
        nix::sys::signal::kill(pid, signal).with_context(|| format!("cannot send {signal} to member {}", m.id))?;
        m.life = if signal == nix::sys::signal::Signal::SIGSTOP { Life::Paused } else { Life::Running };
        Ok(())
    }

    /// The last line of member `i`'s log.
    fn last_log_line(&self, i: usize) -> String {
        std::fs::read_to_string(&self.members[i].log)
            .ok()
            .and_then(|log| log.lines().rev().find(|l| !l.trim().is_empty()).map(str::to_owned))
            .unwrap_or_default()
    }
}

/// Why a run stopped before its last round.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
enum Stopped {
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// The first election did not end.
    NoFirstLeader { after_ms: f64 },
    /// After a round, the cluster did not become stable again.
    Unsettled { round: u32, after_ms: f64 },
    /// A member process ended without being killed.
    MemberExited { member: u32, detail: String },
    /// Something went wrong in this process (spawning, signalling).
    Error { detail: String },
}

/// A failed round.
#[derive(Clone, Debug, Serialize)]
struct FailedRound {
    round: u32,
    leader: u32,
    epoch: u64,
    /// What each survivor reported when the round timed out (`leader@epoch`, `-` for no line yet).
    views: BTreeMap<u32, String>,
}

/// A measured round.
#[derive(Clone, Debug, Serialize)]
struct Round {
    round: u32,
    /// The leader that was killed or paused, and its epoch.
    leader: u32,
    epoch: u64,
    /// The leader every survivor agreed on, and its epoch.
    new_leader: u32,
    new_epoch: u64,
    /// From the signal to the line that completed the survivors' agreement.
    failover_ms: f64,
    /// From the restart (or SIGCONT) to the agreement of every member that then held for the quiet period.
    rejoin_ms: Option<f64>,
}

/// Two leaders named in one epoch.
#[derive(Clone, Debug, Serialize)]
struct DoubleLeader {
    epoch: u64,
    leaders: Vec<u32>,
    /// Who named them: `member -> leader`.
    named_by: BTreeMap<u32, u32>,
}

/// A member claiming leadership under an epoch lower than one already granted.
#[derive(Clone, Debug, Serialize)]
struct StaleClaim {
    member: u32,
    epoch: u64,
    /// The highest epoch granted when the claim was seen.
    highest: u64,
    /// How long the member went on reporting the claim (`None`: until the end of the run).
    lasted_ms: Option<f64>,
}

/// The measuring loop's state.
struct Bench<'p> {
    plan: &'p Plan,
    fleet: Fleet,
    inbox: Receiver<Event>,
    /// Per epoch, the leaders named in it and who named them.
    named: BTreeMap<u64, BTreeMap<u32, u32>>,
    /// The highest epoch any line named a leader in.
    highest: u64,
    stale: Vec<StaleClaim>,
    /// Open stale claims: member index -> (index into `stale`, since).
    open_stale: BTreeMap<usize, (usize, Instant)>,
    last_line: Instant,
    first_election: Option<Duration>,
    rounds: Vec<Round>,
    failed: Vec<FailedRound>,
    progress: ProgressBar,
}

impl<'p> Bench<'p> {
    fn new(plan: &'p Plan, exe: PathBuf, data: &Path, events: Sender<Event>, inbox: Receiver<Event>) -> Self {
        let members = (1..=plan.nodes)
            .map(|id| Member {
                id,
                addr: loopback(0),
                dir: data.join(id.to_string()),
                log: data.join(format!("{id}.log")),
                child: None,
                generation: 0,
                life: Life::Dead,
                latest: None,
            })
            .collect();
        let progress = ProgressBar::with_draw_target(Some(u64::from(plan.rounds)), ProgressDrawTarget::hidden());
        progress.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} rounds · {msg} [{elapsed}]").expect("a valid template"),
        );
        Self {
            plan,
            fleet: Fleet { exe, members, pids: Vec::new(), events },
            inbox,
            named: BTreeMap::new(),
            highest: 0,
            stale: Vec::new(),
            open_stale: BTreeMap::new(),
            last_line: Instant::now(),
            first_election: None,
            rounds: Vec::new(),
            failed: Vec::new(),
            progress,
        }
    }

    /// Starts the cluster and runs the rounds; `Err` says why it stopped early.
    fn run(&mut self) -> Result<(), Stopped> {
        self.start()?;
        if self.plan.rounds > 1 && io::IsTerminal::is_terminal(&io::stderr()) {
            self.progress.set_draw_target(ProgressDrawTarget::stderr());
        }
        for round in 1..=self.plan.rounds {
            self.round(round)?;
            self.progress.inc(1);
        }
        self.progress.finish_and_clear();
        Ok(())
    }

    /// Starts every member and waits for the first stable leader; tries again with other ports when a member
    /// could not bind the one chosen for it.
    fn start(&mut self) -> Result<(), Stopped> {
        let timeout = self.plan.round_timeout + Duration::from_secs(5);
        let mut attempt = 1;
        loop {
            let ports = free_ports(self.fleet.members.len()).map_err(error)?;
            for (m, port) in self.fleet.members.iter_mut().zip(ports) {
                m.addr = loopback(port);
            }
            let started = Instant::now();
            for i in 0..self.fleet.members.len() {
                self.fleet.spawn(i, self.plan).map_err(error)?;
            }
            match self.wait_stable(started + timeout) {
                Ok(Some(at)) => {
                    self.first_election = Some(at.saturating_duration_since(started));
                    return Ok(());
                }
                Ok(None) => return Err(Stopped::NoFirstLeader { after_ms: ms(timeout) }),
                Err(Stopped::MemberExited { detail, .. })
                    if detail.contains("cannot listen") && attempt < START_TRIES =>
                {
                    self.fleet.stop_all();
                    self.drain();
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Forgets the events of processes that were stopped.
    fn drain(&mut self) {
        while self.inbox.try_recv().is_ok() {}
    }

    /// One round: the fault, the failover, the recovery.
    fn round(&mut self, round: u32) -> Result<(), Stopped> {
        let Some((leader, before)) = self.agreement(|_| true) else {
            return Err(error(format!("round {round} found no agreed leader to fail")));
        };
        let Some(li) = self.fleet.members.iter().position(|m| m.id == leader) else {
            return Err(error(format!("the members agree on {leader}, which is not a member")));
        };
        let t0 = Instant::now();
        match self.plan.fault {
            Fault::Kill => self.fleet.stop(li),
            #[cfg(unix)]
            Fault::Pause => self.fleet.signal(li, nix::sys::signal::Signal::SIGSTOP).map_err(error)?,
            #[cfg(not(unix))]
            Fault::Pause => unreachable!("refused by plan()"),
        }
        let deadline = t0 + self.plan.round_timeout;
        let agreed =
            self.wait_for(deadline, |b| b.agreement(|m| m.id != leader).filter(|&(l, e)| l != leader && e > before))?;
        let measured = agreed.map(|(at, (new_leader, new_epoch))| Round {
            round,
            leader,
            epoch: before,
            new_leader,
            new_epoch,
            failover_ms: ms(at.saturating_duration_since(t0)),
            rejoin_ms: None,
        });
        if measured.is_none() {
            let views = self
                .fleet
                .members
                .iter()
                .filter(|m| m.id != leader)
                .map(|m| {
                    let view = m.latest.map_or_else(|| "-".to_owned(), show);
                    (m.id, view)
                })
                .collect();
            self.failed.push(FailedRound { round, leader, epoch: before, views });
        }
        // Back in the cluster.
        let resumed = Instant::now();
        match self.plan.fault {
            Fault::Kill => self.fleet.spawn(li, self.plan).map_err(error)?,
            #[cfg(unix)]
            Fault::Pause => {
                self.fleet.signal(li, nix::sys::signal::Signal::SIGCONT).map_err(error)?;
                if let Some(View { leader: Some(l), epoch: e }) = self.fleet.members[li].latest
                    && l == leader
                    && e < self.highest
                {
                    self.open_stale_claim(li, e, resumed);
                }
            }
            #[cfg(not(unix))]
            Fault::Pause => unreachable!("refused by plan()"),
        }
        let settle = self.plan.round_timeout + Duration::from_secs(5);
        let Some(stable) = self.wait_stable(resumed + settle)? else {
            return Err(Stopped::Unsettled { round, after_ms: ms(settle) });
        };
        if let Some(mut r) = measured {
            r.rejoin_ms = Some(ms(stable.saturating_duration_since(resumed)));
            self.progress.set_message(format!("last failover {:.1} ms", r.failover_ms));
            self.rounds.push(r);
        }
        Ok(())
    }

    /// The leader and epoch every running member that `which` selects reports, if they all report the same one
    /// (and there is at least one).
    fn agreement(&self, which: impl Fn(&Member) -> bool) -> Option<(u32, u64)> {
        let mut views = self.fleet.members.iter().filter(|m| m.life == Life::Running && which(m)).map(|m| m.latest);
        let first = views.next()??;
        let leader = first.leader?;
        views.all(|v| v == Some(first)).then_some((leader, first.epoch))
    }

    /// Whether every member runs and all report the same leader and epoch.
    fn all_agree(&self) -> bool {
        self.fleet.members.iter().all(|m| m.life == Life::Running) && self.agreement(|_| true).is_some()
    }

    /// Waits until every member agrees and nothing has changed for the quiet period; returns when the agreement
    /// began, or `None` at the deadline.
    fn wait_stable(&mut self, deadline: Instant) -> Result<Option<Instant>, Stopped> {
        let mut since = self.all_agree().then(Instant::now);
        loop {
            let now = Instant::now();
            if let Some(s) = since
                && now.saturating_duration_since(self.last_line) >= self.plan.quiet
            {
                return Ok(Some(s));
            }
            if now >= deadline {
                return Ok(None);
            }
            let wake = if since.is_some() { deadline.min(self.last_line + self.plan.quiet) } else { deadline };
            match self.inbox.recv_timeout(wake.saturating_duration_since(now)) {
                Ok(event) => {
                    if let Some(at) = self.handle(event)? {
                        since = if self.all_agree() { Some(since.unwrap_or(at)) } else { None };
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(error("the members' output was lost")),
            }
        }
    }

    /// Waits until `done` says something; returns it with the arrival time of the line that made it true, or
    /// `None` at the deadline.
    fn wait_for<T>(
        &mut self,
        deadline: Instant,
        done: impl Fn(&Self) -> Option<T>,
    ) -> Result<Option<(Instant, T)>, Stopped> {
        if let Some(t) = done(self) {
            return Ok(Some((Instant::now(), t)));
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            match self.inbox.recv_timeout(deadline - now) {
                Ok(event) => {
                    if let Some(at) = self.handle(event)?
                        && let Some(t) = done(self)
                    {
                        return Ok(Some((at, t)));
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(error("the members' output was lost")),
            }
        }
    }

    /// Takes an event in; returns the arrival time of a line of a current process.
    fn handle(&mut self, event: Event) -> Result<Option<Instant>, Stopped> {
        match event {
            Event::Interrupted => Err(Stopped::Interrupted),
            Event::Closed { member, generation } => {
                let m = &self.fleet.members[member];
                if generation != m.generation || m.life == Life::Dead {
                    return Ok(None);
                }
                let id = m.id;
                // Give the process a moment to be reaped, so that its status is known.
                let mut status = None;
                if let Some(child) = self.fleet.members[member].child.as_mut() {
                    for _ in 0..20 {
                        if let Ok(Some(s)) = child.try_wait() {
                            status = Some(s);
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                self.fleet.stop(member);
                if INTERRUPTED.load(Ordering::SeqCst) {
                    return Err(Stopped::Interrupted);
                }
                let status = status.map_or_else(|| "its output closed".to_owned(), |s| s.to_string());
                let detail = format!("{status}: {}", self.fleet.last_log_line(member));
                Err(Stopped::MemberExited { member: id, detail })
            }
            Event::Line { member, generation, at, line } => {
                let Some(view) = parse_line(&line) else { return Ok(None) };
                let id = self.fleet.members[member].id;
                if let Some(leader) = view.leader {
                    self.named.entry(view.epoch).or_default().insert(id, leader);
                    if leader == id && view.epoch < self.highest {
                        self.open_stale_claim(member, view.epoch, at);
                    }
                    self.highest = self.highest.max(view.epoch);
                }
                if generation != self.fleet.members[member].generation {
                    return Ok(None);
                }
                if self.fleet.members[member].latest != Some(view)
                    && let Some((k, since)) = self.open_stale.remove(&member)
                {
                    self.stale[k].lasted_ms = Some(ms(at.saturating_duration_since(since)));
                }
                self.fleet.members[member].latest = Some(view);
                self.last_line = self.last_line.max(at);
                Ok(Some(at))
            }
        }
    }

    fn open_stale_claim(&mut self, member: usize, epoch: u64, since: Instant) {
        if self.open_stale.contains_key(&member) {
            return;
        }
        let id = self.fleet.members[member].id;
        self.stale.push(StaleClaim { member: id, epoch, highest: self.highest, lasted_ms: None });
        self.open_stale.insert(member, (self.stale.len() - 1, since));
    }

    fn report(&mut self, result: Result<(), Stopped>, data: &Path) -> Report {
        self.progress.finish_and_clear();
        let samples: Vec<f64> = self.rounds.iter().map(|r| r.failover_ms).collect();
        let double_leaders = self
            .named
            .iter()
            .filter_map(|(&epoch, by)| {
                let leaders: BTreeSet<u32> = by.values().copied().collect();
                (leaders.len() > 1).then(|| DoubleLeader {
                    epoch,
                    leaders: leaders.into_iter().collect(),
                    named_by: by.clone(),
                })
            })
            .collect();
        let plan = self.plan;
        Report {
            algorithm: plan.algorithm,
            nodes: plan.nodes,
            fault: plan.fault,
            heartbeat_ms: plan.heartbeat_ms,
            delay_bound_ms: plan.delay_bound_ms,
            seed: plan.seed,
            rounds: plan.rounds,
            first_election_ms: self.first_election.map(ms),
            failover_ms: Summary::of(&samples),
            samples_ms: samples,
            failed_rounds: std::mem::take(&mut self.failed),
            double_leaders,
            stale_claims: std::mem::take(&mut self.stale),
            stopped: result.err(),
            details: std::mem::take(&mut self.rounds),
            pids: self.fleet.pids.clone(),
            data_dir: data.to_owned(),
        }
    }
}

/// Ports the OS chose for UDP on 127.0.0.1, distinct (all are held at once), released for the members to bind.
fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    let sockets = (0..n).map(|_| UdpSocket::bind(loopback(0))).collect::<io::Result<Vec<_>>>()?;
    sockets.iter().map(|s| s.local_addr().map(|a| a.port())).collect()
}

fn error(e: impl std::fmt::Display) -> Stopped {
    Stopped::Error { detail: format!("{e:#}") }
}

/// `{"id":1,"leader":3,"epoch":...}` → the view; `None` for anything else.
fn parse_line(line: &str) -> Option<View> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let epoch = v.get("epoch")?.as_u64()?;
    let leader = match v.get("leader")? {
        serde_json::Value::Null => None,
        l => Some(u32::try_from(l.as_u64()?).ok()?),
    };
    Some(View { leader, epoch })
}

fn show(v: View) -> String {
    match v.leader {
        Some(l) => format!("{l}@{}", epoch::show(v.epoch)),
        None => format!("none@{}", epoch::show(v.epoch)),
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// Percentiles (nearest rank), maximum and mean of the samples, in milliseconds.
#[derive(Clone, Copy, Debug, Serialize)]
struct Summary {
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    mean: f64,
}

impl Summary {
    fn of(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = |q: f64| sorted[((q * sorted.len() as f64 - 1e-9).ceil() as usize).clamp(1, sorted.len()) - 1];
        let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
        Some(Self {
            p50: rank(0.5),
            p90: rank(0.9),
            p99: rank(0.99),
            max: sorted[sorted.len() - 1],
            mean: (mean * 1e3).round() / 1e3,
        })
    }
}

/// The JSON report; the text table shows the same figures.
#[derive(Serialize)]
struct Report {
    algorithm: &'static str,
    nodes: u32,
    fault: Fault,
    heartbeat_ms: u64,
    delay_bound_ms: u64,
    seed: u64,
    /// Rounds asked for.
    rounds: u32,
    first_election_ms: Option<f64>,
    /// Over the measured rounds; `null` when none was.
    failover_ms: Option<Summary>,
    /// One per measured round, in order.
    samples_ms: Vec<f64>,
    failed_rounds: Vec<FailedRound>,
    double_leaders: Vec<DoubleLeader>,
    stale_claims: Vec<StaleClaim>,
    /// Why the run ended early, if it did.
    stopped: Option<Stopped>,
    /// Each measured round.
    details: Vec<Round>,
    /// Every member process started (all killed and reaped before the report is printed).
    pids: Vec<u32>,
    /// The members' data directories and logs (removed at the end unless --keep-data).
    data_dir: PathBuf,
}

impl Report {
    fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        let fault = match self.fault {
            Fault::Kill => "SIGKILL the leader, then restart it",
            Fault::Pause => "SIGSTOP the leader, then SIGCONT it",
        };
        writeln!(
            out,
            "{} members, {}, heartbeat {} ms (T = {} ms), seed {}: {fault}, {} rounds",
            self.nodes, self.algorithm, self.heartbeat_ms, self.delay_bound_ms, self.seed, self.rounds
        )?;
        if let Some(first) = self.first_election_ms {
            writeln!(out, "first leader agreed on after {first:.1} ms (from the start of the processes)")?;
        }
        let mut table = Table::new(vec![
            "ROUNDS",
            "FAILED",
            "P50 MS",
            "P90 MS",
            "P99 MS",
            "MAX MS",
            "MEAN MS",
            "DOUBLE LEADERS",
            "STALE CLAIMS",
        ]);
        let figure = |f: fn(&Summary) -> f64| {
            self.failover_ms.as_ref().map_or_else(|| "-".to_owned(), |s| format!("{:.1}", f(s)))
        };
        table.row(vec![
            self.samples_ms.len().to_string(),
            self.failed_rounds.len().to_string(),
            figure(|s| s.p50),
            figure(|s| s.p90),
            figure(|s| s.p99),
            figure(|s| s.max),
            figure(|s| s.mean),
            self.double_leaders.len().to_string(),
            self.stale_claims.len().to_string(),
        ]);
        table.write(out)?;
        for f in &self.failed_rounds {
            let views: Vec<String> = f.views.iter().map(|(id, v)| format!("{id}: {v}")).collect();
            writeln!(
                out,
                "round {} failed: no agreement after leader {} (epoch {}) went down; survivors saw {}",
                f.round,
                f.leader,
                epoch::show(f.epoch),
                views.join(", ")
            )?;
        }
        for d in &self.double_leaders {
            let by: Vec<String> = d.named_by.iter().map(|(m, l)| format!("{m} named {l}")).collect();
            writeln!(out, "DOUBLE LEADER in epoch {}: {}", epoch::show(d.epoch), by.join(", "))?;
        }
        if !self.stale_claims.is_empty() {
            let lasted: Vec<f64> = self.stale_claims.iter().filter_map(|s| s.lasted_ms).collect();
            let how_long = Summary::of(&lasted).map_or_else(String::new, |s| {
                format!(", for {:.1} ms at the median and {:.1} ms at most", s.p50, s.max)
            });
            writeln!(
                out,
                "stale claims: {} times a member still claimed leadership under an epoch older than the newest \
                 grant{how_long} (a store that checks fencing epochs refuses its writes; --json lists each)",
                self.stale_claims.len()
            )?;
        }
        if let Some(stopped) = &self.stopped {
            let why = match stopped {
                Stopped::Interrupted => "interrupted".to_owned(),
                Stopped::NoFirstLeader { after_ms } => format!("no stable first leader after {after_ms:.0} ms"),
                Stopped::Unsettled { round, after_ms } => {
                    format!("the cluster was not stable {after_ms:.0} ms after round {round}")
                }
                Stopped::MemberExited { member, detail } => format!("member {member} ended on its own: {detail}"),
                Stopped::Error { detail } => detail.clone(),
            };
            writeln!(out, "stopped early: {why}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&samples).unwrap();
        assert_eq!((s.p50, s.p90, s.p99, s.max, s.mean), (50.0, 90.0, 99.0, 100.0, 50.5));
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.p50, s.p90, s.p99, s.max), (2.0, 3.0, 3.0, 3.0));
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn member_lines_parse() {
        let line = r#"{"id":1,"leader":3,"epoch":4294967299,"epoch_round":1,"incarnation":2}"#;
        assert_eq!(parse_line(line), Some(View { leader: Some(3), epoch: 4_294_967_299 }));
        let line = r#"{"id":1,"leader":null,"epoch":0,"epoch_round":0,"incarnation":1}"#;
        assert_eq!(parse_line(line), Some(View { leader: None, epoch: 0 }));
        assert_eq!(parse_line("not json"), None);
    }
}
