//! Running `elect` as a child process under a bound on time and memory, for the tests of limits and of the
//! command line's grammar.

// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run of `elect` did.
pub(crate) struct Ran {
    /// The exit status; `None` when it was killed.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// The resident high-water mark (`VmHWM` in `/proc/PID/status`, sampled while it ran), in bytes.
    pub(crate) peak: u64,
    pub(crate) took: Duration,
    /// Whether it was killed for running longer than its time or taking more than its memory.
    pub(crate) killed: bool,
}

/// Runs `elect ARGS`, killing it if it runs longer than `time` or its resident set passes `memory` bytes.
pub(crate) fn run<S: AsRef<std::ffi::OsStr>>(args: &[S], time: Duration, memory: u64) -> Ran {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_elect"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let status = format!("/proc/{}/status", child.id());
    let (mut peak, mut killed) = (0, false);
    let code = loop {
        if let Some(kib) = std::fs::read_to_string(&status).ok().and_then(|s| hwm_kib(&s)) {
            peak = peak.max(kib * 1024);
        }
        if let Some(exit) = child.try_wait().unwrap() {
            break exit.code();
        }
        if started.elapsed() > time || peak > memory {
            child.kill().unwrap();
            child.wait().unwrap();
            killed = true;
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    Ran { code, stdout, stderr, peak, took: started.elapsed(), killed }
}

fn hwm_kib(status: &str) -> Option<u64> {
    status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}
