//! Programs as algorithms: `--algorithm exec:./ring.py` starts the program once, as a child process, and speaks
//! the process protocol with it over its standard input and output, one JSON line each way per step
//! ([`elect_algos::program`] speaks the protocol). Every answer is bounded in time and in size; a program that
//! exits, hangs or writes too much is killed, reaped and reported, naming the process, the event and the step.
//!
//! The command line sets the bounds ([`install`]) from its flags `--program-timeout` and `--program-max-line`.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use elect_algos::program::Stepper;

/// How long a program may take to answer one request, and how long a line it may write.
#[derive(Clone, Copy, Debug)]
pub struct ProgramLimits {
    /// The longest a program may take to answer one step (its first answer, as it starts, may take 10 s at
    /// least).
    pub timeout: Duration,
    /// The longest line it may answer with, in bytes.
    pub max_line: usize,
}

static LIMITS: OnceLock<ProgramLimits> = OnceLock::new();

/// Lets `exec:` name programs, each started as a child process and held to `limits`. The first call's limits
/// hold for the life of the process.
pub fn install(limits: ProgramLimits) {
    let _ = LIMITS.set(limits);
    elect_algos::program::set_loader(start);
}

/// Starts `command` (a program and its arguments, split at spaces: `./ring.py`, `python3 ring.py`).
fn start(command: &str) -> Result<Box<dyn Stepper>, String> {
    let limits = LIMITS.get().copied().unwrap_or(ProgramLimits { timeout: Duration::from_secs(10), max_line: 1 << 20 });
    Running::start(command, limits).map(|c| Box::new(c) as Box<dyn Stepper>)
}

/// A program running as a child process.
struct Running {
    command: String,
    limits: ProgramLimits,
    inner: Mutex<Inner>,
}

struct Inner {
    child: std::process::Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    /// What it wrote after the last line read.
    pending: Vec<u8>,
    /// Why it can no longer be asked anything.
    dead: Option<String>,
    /// Whether it has answered once: its first answer comes after it starts, which may take longer than a step.
    answered: bool,
}

/// The least time a program has for its first answer, whatever `--program-timeout` says: an interpreter that starts
/// on a busy machine can take seconds before it reads its first line.
const STARTING: Duration = Duration::from_secs(10);

impl Running {
    fn start(command: &str, limits: ProgramLimits) -> Result<Self, String> {
        let mut words = command.split_whitespace();
        let program = words.next().ok_or("exec: needs a program to run: exec:./ring.py")?;
        let mut child = Command::new(program)
            .args(words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
                    " (make it executable with a #! line, or name its interpreter: exec:python3 ring.py)"
                } else {
                    ""
                };
                format!("cannot start {command}: {e}{hint}")
            })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("the program has no standard output")?;
        let inner = Inner { child, stdin, stdout, pending: Vec::new(), dead: None, answered: false };
        Ok(Self { command: command.to_owned(), limits, inner: Mutex::new(inner) })
    }
}

/// Why a line could not be read.
enum Unread {
    /// The program closed its output (it ended, most likely).
    Closed,
    /// Past the deadline.
    Late,
    /// Too long, not UTF-8, or the pipe failed.
    Wrong(String),
}

impl Inner {
    /// The next line the program writes, without its newline: at most `max` bytes, before `deadline`. Read on the
    /// asking thread (waiting with poll), so that a step costs no hand-over between threads.
    fn read_line(&mut self, max: usize, deadline: Instant) -> Result<String, Unread> {
        let mut scanned = 0;
        loop {
            if let Some(at) = self.pending[scanned..].iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=scanned + at).collect();
                line.pop();
                if line.len() > max {
                    return Err(Unread::Wrong(format!("it wrote a line longer than {max} bytes (--program-max-line)")));
                }
                return String::from_utf8(line).map_err(|_| Unread::Wrong("it wrote a line that is not UTF-8".into()));
            }
            scanned = self.pending.len();
            if scanned > max {
                return Err(Unread::Wrong(format!("it wrote a line longer than {max} bytes (--program-max-line)")));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = nix::poll::PollTimeout::try_from(left.as_millis().min(60_000) as i32)
                .unwrap_or(nix::poll::PollTimeout::MAX);
            let mut fds = [nix::poll::PollFd::new(self.stdout.as_fd(), nix::poll::PollFlags::POLLIN)];
            match nix::poll::poll(&mut fds, wait) {
                Ok(0) if left.is_zero() => return Err(Unread::Late),
                Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
                Ok(_) => {}
                Err(e) => return Err(Unread::Wrong(format!("cannot wait for its answer: {e}"))),
            }
            let mut chunk = [0u8; 64 * 1024];
            match self.stdout.read(&mut chunk) {
                Ok(0) => return Err(Unread::Closed),
                Ok(n) => self.pending.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Unread::Wrong(format!("cannot read its answer: {e}"))),
            }
        }
    }

    /// Stops the program, if it runs, and reaps it; `why` is kept for every later request.
    fn stop(&mut self, why: String) -> String {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.dead.get_or_insert(why).clone()
    }

    /// Closes the program's input and waits up to `time` for it to exit: its status, if it did.
    fn exit_within(&mut self, time: Duration) -> Option<std::process::ExitStatus> {
        self.stdin = None;
        let deadline = Instant::now() + time;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => return None,
            }
        }
    }

    /// How the program ended, after its output closed: waits for it a moment, then kills it.
    fn ended(&mut self) -> String {
        let why = match self.exit_within(Duration::from_secs(1)) {
            Some(status) => match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
                (Some(code), _) => format!("it exited with status {code} instead of answering"),
                (None, Some(signal)) => format!("it was killed by signal {signal} instead of answering"),
                _ => "it ended instead of answering".to_owned(),
            },
            None => "it closed its output instead of answering".to_owned(),
        };
        self.stop(why)
    }
}

impl Stepper for Running {
    fn call(&self, request: &str) -> Result<String, String> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = &inner.dead {
            return Err(why.clone());
        }
        let written = match inner.stdin.as_mut() {
            Some(stdin) => {
                stdin.write_all(request.as_bytes()).and_then(|()| stdin.write_all(b"\n")).and_then(|()| stdin.flush())
            }
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        if written.is_err() {
            return Err(inner.ended());
        }
        let (allowed, which) = match inner.answered {
            true => (self.limits.timeout, "--program-timeout"),
            false => (self.limits.timeout.max(STARTING), "its first answer, as it starts"),
        };
        match inner.read_line(self.limits.max_line, Instant::now() + allowed) {
            Ok(line) => {
                inner.answered = true;
                Ok(line)
            }
            Err(Unread::Closed) => Err(inner.ended()),
            Err(Unread::Wrong(why)) => Err(inner.stop(why)),
            Err(Unread::Late) => Err(inner.stop(format!(
                "it did not answer within {} ms ({}); {} was stopped",
                allowed.as_millis(),
                which,
                self.command
            ))),
        }
    }

    fn shutdown(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Its input closes first, so that a program that reads to the end exits by itself.
        if inner.exit_within(Duration::from_millis(500)).is_none() {
            inner.stop("it was shut down".to_owned());
        }
    }
}
