//! The member processes: where they keep their state, spawning them, the threads that read their stdout, the
//! signals, and killing and reaping them on every way out.

use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use anyhow::Context;
use elect_core::Epoch;

use super::netns::Net;
use super::plan::{Plan, loopback};
use crate::BadRequest;

/// Where the members keep their state and logs: a temporary directory removed at the end, or a kept one.
pub(super) enum Data {
    Temporary(tempfile::TempDir),
    Kept(PathBuf),
}

impl Data {
    pub(super) fn new(keep: Option<&Path>) -> anyhow::Result<Self> {
        Ok(match keep {
            Some(dir) => {
                if dir.exists() && !dir.is_dir() {
                    return Err(BadRequest(format!("--keep-data {}: not a directory", dir.display())).into());
                }
                std::fs::create_dir_all(dir)
                    .map_err(|e| BadRequest(format!("cannot create --keep-data {}: {e}", dir.display())))?;
                // The members write there: find out now, not from their failures.
                tempfile::tempfile_in(dir)
                    .map_err(|e| BadRequest(format!("--keep-data {} is not writable: {e}", dir.display())))?;
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

    pub(super) fn path(&self) -> &Path {
        match self {
            Self::Temporary(dir) => dir.path(),
            Self::Kept(dir) => dir,
        }
    }
}

/// What the reader threads and the interrupt watcher tell the main loop.
pub(super) enum Event {
    /// A line on a member's stdout, stamped on arrival.
    Line { member: usize, generation: u32, at: Instant, line: String },
    /// A member's stdout closed: the process ended.
    Closed { member: usize, generation: u32 },
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// An `elect voters` process asked for a change of the voters ended (`ok`: it exited 0, the change done).
    ChangeEnded { attempt: u32, at: Instant, ok: bool },
}

/// Set on Ctrl-C or SIGTERM: a member that ends at that moment was interrupted too (a Ctrl-C at a terminal reaches
/// the members as well).
pub(super) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Sends [`Event::Interrupted`] on Ctrl-C or SIGTERM, from a thread of its own.
pub(super) fn watch_for_interrupts(events: Sender<Event>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    std::thread::spawn(move || {
        runtime.block_on(elect_net::shutdown_signal());
        INTERRUPTED.store(true, Ordering::SeqCst);
        let _ = events.send(Event::Interrupted);
    });
}

/// What a member's latest line said.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct View {
    pub(super) leader: Option<u32>,
    pub(super) epoch: Epoch,
}

/// Whether a member's process runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Life {
    Running,
    Paused,
    Dead,
}

/// One member: its address, its directory, and its current process.
pub(super) struct Member {
    pub(super) id: u32,
    addr: SocketAddr,
    /// Where it serves HTTP, when the run changes the voters.
    pub(super) http: Option<SocketAddr>,
    dir: PathBuf,
    log: PathBuf,
    child: Option<Child>,
    /// Counts the processes started for this member; lines of earlier ones do not update `latest`.
    pub(super) generation: u32,
    pub(super) life: Life,
    /// The latest line of the current process (`None` until it prints one).
    pub(super) latest: Option<View>,
}

/// The member processes. Dropping it kills and reaps every one of them.
pub(super) struct Fleet {
    exe: PathBuf,
    pub(super) members: Vec<Member>,
    /// Every process id ever started, for the report.
    pub(super) pids: Vec<u32>,
    events: Sender<Event>,
    /// The network namespaces the members run in, with the nemesis (dropped after the members are stopped).
    pub(super) net: Option<Net>,
    /// The fencing store's socket, which every member writes to while it leads.
    store: PathBuf,
    /// The HTTP token's file, when the run changes the voters (the members' `POST /voters` asks for it).
    pub(super) token: Option<PathBuf>,
    /// Where the `elect voters` processes write what they say.
    pub(super) changes_log: PathBuf,
    /// Set at the end of the run: the threads that watch `elect voters` processes kill them.
    abandon: std::sync::Arc<AtomicBool>,
    /// The threads that watch `elect voters` processes.
    watchers: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.abandon_changes();
        self.stop_all();
    }
}

impl Fleet {
    /// Members 1 to `plan.nodes`, none running yet, each with a directory and a log in `data`; their processes'
    /// events go to `events`.
    pub(super) fn new(
        plan: &Plan,
        exe: PathBuf,
        data: &Path,
        events: Sender<Event>,
        net: Option<Net>,
        store: PathBuf,
    ) -> anyhow::Result<Self> {
        let members = (1..=plan.nodes)
            .map(|id| Member {
                id,
                addr: loopback(0),
                http: None,
                dir: data.join(id.to_string()),
                log: data.join(format!("{id}.log")),
                child: None,
                generation: 0,
                life: Life::Dead,
                latest: None,
            })
            .collect();
        let token = if plan.change_voters { Some(write_token(data)?) } else { None };
        let changes_log = data.join("changes.log");
        let abandon = std::sync::Arc::new(AtomicBool::new(false));
        Ok(Self {
            exe,
            members,
            pids: Vec::new(),
            events,
            net,
            store,
            token,
            changes_log,
            abandon,
            watchers: Vec::new(),
        })
    }

    /// Gives every member a port the OS chose (in namespaces of their own, every member's address is fixed).
    pub(super) fn choose_ports(&mut self) -> io::Result<()> {
        let http = self.token.is_some();
        if self.net.is_some() {
            for (i, m) in self.members.iter_mut().enumerate() {
                m.addr = Net::addr(i);
                m.http = http.then(|| Net::http_addr(i));
            }
            return Ok(());
        }
        let ports = free_ports(self.members.len())?;
        let http_ports = if http { free_tcp_ports(self.members.len())? } else { Vec::new() };
        for (i, (m, port)) in self.members.iter_mut().zip(ports).enumerate() {
            m.addr = loopback(port);
            m.http = http_ports.get(i).map(|&p| loopback(p));
        }
        Ok(())
    }

    /// Kills and reaps every member process.
    pub(super) fn stop_all(&mut self) {
        for i in 0..self.members.len() {
            self.stop(i);
        }
    }

    /// Kills and reaps member `i`'s process (SIGKILL ends a stopped process too).
    pub(super) fn stop(&mut self, i: usize) {
        let m = &mut self.members[i];
        if let Some(mut child) = m.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        m.life = Life::Dead;
    }

    /// Starts member `i`'s process (again), with stdout read by a thread of its own and stderr appended to its log.
    pub(super) fn spawn(&mut self, i: usize, plan: &Plan) -> anyhow::Result<()> {
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
        let base = match &self.net {
            Some(net) => net.command(i, &self.exe),
            None => std::process::Command::new(&self.exe),
        };
        let http = m.http.zip(self.token.as_deref());
        let mut cmd = plan.member_command(base, m.id, m.addr, &peers, &m.dir, http);
        // The member keeps reading a pipe whose other end only this process holds: if it dies, even by SIGKILL,
        // the members see the end of their input and shut down instead of living on as orphans.
        cmd.arg("--stop-on-stdin-close").arg("--fencing-store").arg(&self.store);
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
        std::thread::spawn(move || read_lines(stdout, i, generation, &events));
        Ok(())
    }

    /// The exit status of member `i`'s process, whose stdout closed, after giving it a moment to be reaped so that
    /// its status is known; `None` if it is not known by then.
    pub(super) fn exit_status(&mut self, i: usize) -> Option<ExitStatus> {
        let child = self.members[i].child.as_mut()?;
        for _ in 0..20 {
            if let Ok(Some(s)) = child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// Sends SIGSTOP or SIGCONT to member `i`.
    #[cfg(unix)]
    pub(super) fn signal(&mut self, i: usize, signal: nix::sys::signal::Signal) -> anyhow::Result<()> {
        let m = &mut self.members[i];
        let child = m.child.as_ref().context("the member has no process")?;
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).context("a process id out of range")?);
        nix::sys::signal::kill(pid, signal).with_context(|| format!("cannot send {signal} to member {}", m.id))?;
        m.life = if signal == nix::sys::signal::Signal::SIGSTOP { Life::Paused } else { Life::Running };
        Ok(())
    }

    /// The last line of member `i`'s log.
    pub(super) fn last_log_line(&self, i: usize) -> String {
        std::fs::read_to_string(&self.members[i].log)
            .ok()
            .and_then(|log| log.lines().rev().find(|l| !l.trim().is_empty()).map(str::to_owned))
            .unwrap_or_default()
    }
}

impl Fleet {
    /// A command that runs `elect voters ARGS`, from where every member's HTTP endpoint can be reached whatever the
    /// fault (the operator's namespace, with the nemesis), what it says on stderr appended to the changes' log.
    fn voters_command(&self, args: &[String]) -> anyhow::Result<std::process::Command> {
        let mut cmd = match &self.net {
            Some(net) => net.operator_command(&self.exe),
            None => std::process::Command::new(&self.exe),
        };
        cmd.arg("voters").args(args);
        if let Some(token) = &self.token {
            cmd.arg("--http-token-file").arg(token);
        }
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.changes_log)
            .with_context(|| format!("cannot open {}", self.changes_log.display()))?;
        cmd.stdin(Stdio::null()).stderr(log);
        Ok(cmd)
    }

    /// Asks for a change of the voters (`elect voters --http ADDR... CHANGE`), of the members (indexes) in `side`;
    /// its end comes as [`Event::ChangeEnded`] with `attempt`. A process that runs for longer than
    /// [`CHANGE_LIMIT`] is killed, and counts as failed.
    pub(super) fn ask_change(&mut self, side: &[usize], change: [String; 2], attempt: u32) -> anyhow::Result<()> {
        let mut args: Vec<String> = Vec::new();
        for &i in side {
            if let Some(http) = self.members[i].http {
                args.extend(["--http".to_owned(), http.to_string()]);
            }
        }
        args.extend(change);
        let mut child = self.voters_command(&args)?.stdout(Stdio::null()).spawn().context("cannot run elect voters")?;
        self.pids.push(child.id());
        let (events, abandon) = (self.events.clone(), std::sync::Arc::clone(&self.abandon));
        let watcher = std::thread::spawn(move || {
            let deadline = Instant::now() + CHANGE_LIMIT;
            let ok = loop {
                match child.try_wait() {
                    Ok(Some(status)) => break status.success(),
                    Ok(None) if Instant::now() < deadline && !abandon.load(Ordering::SeqCst) => {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break false;
                    }
                }
            };
            let _ = events.send(Event::ChangeEnded { attempt, at: Instant::now(), ok });
        });
        self.watchers.retain(|w| !w.is_finished());
        self.watchers.push(watcher);
        Ok(())
    }

    /// The voters member `i` holds (`elect voters --http ADDR --json`, `GET /voters`).
    pub(super) fn read_voters(&self, i: usize) -> anyhow::Result<std::collections::BTreeSet<u32>> {
        let http = self.members[i].http.context("the member serves no HTTP")?;
        let out = self.voters_command(&["--http".into(), http.to_string(), "--json".into()])?.output()?;
        anyhow::ensure!(out.status.success(), "elect voters --http {http} failed: see {}", self.changes_log.display());
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).context("elect voters --json")?;
        let voters = doc["voters"].as_array().filter(|v| !v.is_empty()).context("no voters in GET /voters")?;
        let members = 1..=self.members.len() as u64;
        voters
            .iter()
            .map(|v| {
                v.as_u64()
                    .filter(|v| members.contains(v))
                    .and_then(|v| u32::try_from(v).ok())
                    .with_context(|| format!("GET /voters on {http} names {v}, which is not a member"))
            })
            .collect()
    }

    /// Kills and reaps every `elect voters` process still running (at the end of the run).
    pub(super) fn abandon_changes(&mut self) {
        self.abandon.store(true, Ordering::SeqCst);
        for watcher in self.watchers.drain(..) {
            let _ = watcher.join();
        }
    }
}

/// The longest an `elect voters` process may run: a member answers a change within 30 s, finding the leader and a
/// handover take at most 10 s each, and the reads around them are quick on a cluster that answers.
const CHANGE_LIMIT: Duration = Duration::from_secs(70);

/// Writes a fresh random HTTP token to `data/http-token`, readable by this user only, and returns its path.
fn write_token(data: &Path) -> anyhow::Result<PathBuf> {
    use std::io::{Read, Write};
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom for the HTTP token")?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let path = data.join("http-token");
    let mut options = OpenOptions::new();
    options.create(true).write(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path).with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Ports the OS chose for TCP on 127.0.0.1, distinct (all are held at once), released for the members to bind.
fn free_tcp_ports(n: usize) -> io::Result<Vec<u16>> {
    let listeners = (0..n).map(|_| std::net::TcpListener::bind(loopback(0))).collect::<io::Result<Vec<_>>>()?;
    listeners.iter().map(|s| s.local_addr().map(|a| a.port())).collect()
}

/// Ports the OS chose for UDP on 127.0.0.1, distinct (all are held at once), released for the members to bind.
fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    let sockets = (0..n).map(|_| UdpSocket::bind(loopback(0))).collect::<io::Result<Vec<_>>>()?;
    sockets.iter().map(|s| s.local_addr().map(|a| a.port())).collect()
}

/// Sends each line of a member's stdout, stamped on arrival, and then the end of it.
fn read_lines(stdout: ChildStdout, member: usize, generation: u32, events: &Sender<Event>) {
    for line in BufReader::new(stdout).lines() {
        let at = Instant::now();
        let Ok(line) = line else { break };
        if events.send(Event::Line { member, generation, at, line }).is_err() {
            return;
        }
    }
    let _ = events.send(Event::Closed { member, generation });
}
