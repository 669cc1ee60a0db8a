//! Three members of the example application in separate processes, the fencing store in this one: the leader is
//! paused (SIGSTOP) in the middle of a write, another member takes over and writes under a higher epoch, and when
//! the old leader is continued (SIGCONT) its late write reaches the store, which refuses it.
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use elect_example_fencing::{Verdict, Write, serve};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// What the test hears: a line from a member, or a write the store decided.
#[derive(Debug)]
enum Heard {
    Line(u32, serde_json::Value),
    Store(Write, Verdict),
}

/// The member processes, killed and reaped however the test ends.
struct Members(Vec<Child>);

impl Drop for Members {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits up to `within` for something `pick` accepts, ignoring the rest.
fn wait_for<T>(rx: &Receiver<Heard>, within: Duration, what: &str, mut pick: impl FnMut(&Heard) -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let heard = rx.recv_timeout(left).unwrap_or_else(|_| panic!("no {what} within {within:?}"));
        if let Some(t) = pick(&heard) {
            return t;
        }
    }
}

fn signal(child: &Child, signal: Signal) {
    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), signal).unwrap();
}

#[test]
// Long: one cluster and one store, through a pause of the leader and its late write, in the order they happen.
fn a_paused_leaders_late_write_is_refused_by_the_store() {
    let (tx, rx) = mpsc::channel();

    // The store, in this process.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let store = listener.local_addr().unwrap();
    let observer = tx.clone();
    std::thread::spawn(move || {
        serve(listener, move |w, v| {
            let _ = observer.send(Heard::Store(w, v));
        })
    });

    // Three members on ports the OS picked, each writing for 300 ms after it takes its epoch: a window the test
    // can pause the leader in.
    let ports: Vec<u16> =
        (0..3).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut members = Members(Vec::new());
    for (i, port) in ports.iter().enumerate() {
        let id = i as u32 + 1;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fencing-app"));
        cmd.args(["--id", &id.to_string(), "--listen", &format!("127.0.0.1:{port}")]);
        cmd.args(["--store", &store.to_string(), "--work-ms", "300", "--period-ms", "20"]);
        cmd.args(["--cluster", &format!("fencing-test-{}", std::process::id())]);
        cmd.arg("--data-dir").arg(dir.path().join(id.to_string()));
        for (j, p) in ports.iter().enumerate().filter(|&(j, _)| j != i) {
            cmd.args(["--peer", &format!("{}=127.0.0.1:{p}", j + 1)]);
        }
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line) {
                    let _ = tx.send(Heard::Line(id, v));
                }
            }
        });
        members.0.push(child);
    }
    let within = Duration::from_secs(5);

    // The leader's first write is accepted under its epoch.
    let (leader, old_epoch) = wait_for(&rx, within, "accepted write", |h| match *h {
        Heard::Store(w, Verdict::Accepted) => Some((w.writer, w.epoch)),
        _ => None,
    });
    // It takes its next write in hand, and is paused before it is sent.
    let seq = wait_for(&rx, within, "second write", |h| match h {
        Heard::Line(id, v) if *id == leader && v["event"] == "writing" => {
            assert_eq!(v["epoch"].as_u64(), Some(old_epoch), "{v}");
            v["seq"].as_u64()
        }
        _ => None,
    });
    let paused = &members.0[leader as usize - 1];
    signal(paused, Signal::SIGSTOP);

    // Another member is elected and writes under a higher epoch.
    let (successor, new_epoch) = wait_for(&rx, within, "write of a new leader", |h| match *h {
        Heard::Store(w, Verdict::Accepted) if w.writer != leader => Some((w.writer, w.epoch)),
        Heard::Store(w, _) if w.writer == leader => panic!("the paused leader wrote: {w:?}"),
        _ => None,
    });
    assert!(new_epoch > old_epoch, "member {successor} wrote under {new_epoch}, after {old_epoch}");

    // The old leader is continued: its write, decided under the old epoch, reaches the store and is refused.
    signal(paused, Signal::SIGCONT);
    let verdict = wait_for(&rx, within, "late write", |h| match *h {
        Heard::Store(w, v) if w.writer == leader && w.seq == seq => {
            assert_eq!(w.epoch, old_epoch);
            Some(v)
        }
        _ => None,
    });
    match verdict {
        Verdict::Rejected { highest } => assert!(highest >= new_epoch, "{highest} < {new_epoch}"),
        Verdict::Accepted => panic!("the late write under epoch {old_epoch} was accepted after {new_epoch}"),
    }
    // And the old leader learns it: its own line says the write was refused.
    wait_for(&rx, within, "the old leader's report", |h| match h {
        Heard::Line(id, v) if *id == leader && v["seq"].as_u64() == Some(seq) && v["event"] != "writing" => {
            assert_eq!(v["event"], "rejected", "{v}");
            Some(())
        }
        _ => None,
    });
    drop(members);
}
