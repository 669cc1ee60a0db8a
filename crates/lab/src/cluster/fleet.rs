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
    pub(super) epoch: u64,
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
}

impl Drop for Fleet {
    fn drop(&mut self) {
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
    ) -> Self {
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
        Self { exe, members, pids: Vec::new(), events, net, store }
    }

    /// Gives every member a port the OS chose (in namespaces of their own, every member's address is fixed).
    pub(super) fn choose_ports(&mut self) -> io::Result<()> {
        if self.net.is_some() {
            for (i, m) in self.members.iter_mut().enumerate() {
                m.addr = Net::addr(i);
            }
            return Ok(());
        }
        let ports = free_ports(self.members.len())?;
        for (m, port) in self.members.iter_mut().zip(ports) {
            m.addr = loopback(port);
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
        let mut cmd = plan.member_command(base, m.id, m.addr, &peers, &m.dir);
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
