//! `elect node` end to end: bad configurations, and three real processes electing a leader on loopback.

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn elect() -> Command {
    Command::new(env!("CARGO_BIN_EXE_elect"))
}

#[test]
fn bad_configurations_exit_2_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let base = ["node", "--id", "1", "--listen", "127.0.0.1:0", "--data-dir", data, "--algorithm"];
    let cases: [(&[&str], &str); 6] = [
        (&["bully", "--peer", "2"], "expected ID=ADDR"),
        (&["bully", "--peer", "1=127.0.0.1:9"], "listed as its own peer"),
        (&["bully", "--peer", "2=127.0.0.1:9", "--peer", "2=127.0.0.1:8"], "peer 2 is given twice"),
        (&["floodmax", "--peer", "2=127.0.0.1:9"], "does not run over a full mesh"),
        (&["paxos", "--peer", "2=127.0.0.1:9"], "unknown algorithm 'paxos'"),
        (&["bully", "--peer", "2=127.0.0.1:9", "--delay-bound-ms", "0"], "delay bound"),
    ];
    for (args, expected) in cases {
        let out = elect().args(base).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected) && stderr.lines().count() == 1, "{args:?}: {stderr}");
    }
}

#[test]
fn three_processes_agree_on_the_strongest_and_its_epoch() {
    // Ports the OS picks, released just before the members bind them.
    let ports: Vec<u16> =
        (0..3).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::channel();
    let mut children = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let id = i + 1;
        let mut cmd = elect();
        cmd.args(["node", "--id", &id.to_string(), "--listen", &format!("127.0.0.1:{port}"), "--algorithm", "bully"]);
        cmd.args(["--data-dir", dir.path().join(id.to_string()).to_str().unwrap(), "--cluster", "cli-test"]);
        for (j, p) in ports.iter().enumerate().filter(|&(j, _)| j != i) {
            cmd.args(["--peer", &format!("{}=127.0.0.1:{p}", j + 1)]);
        }
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send((id, line));
            }
        });
        children.push(child);
    }
    let mut latest = [String::new(), String::new(), String::new()];
    let deadline = Instant::now() + Duration::from_secs(10);
    let agreed = loop {
        let Ok((id, line)) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) else { break false };
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        latest[id - 1] = format!("{}@{}", v["leader"], v["epoch"]);
        if latest.iter().all(|l| *l == latest[0]) && latest[0].starts_with("3@") {
            break true;
        }
    };
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(agreed, "no agreement on member 3: {latest:?}");
}
