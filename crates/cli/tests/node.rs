//! `elect node` end to end: bad configurations, and three real processes electing a leader on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
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
    let cases: [(&[&str], &str); 8] = [
        (&["bully", "--peer", "2"], "expected ID=HOST:PORT"),
        (&["bully", "--peer", "2=bad host:7"], "bad peer '2=bad host:7': 'bad host' is not a host name"),
        (&["bully", "--peer", "2=h:99999"], "bad peer '2=h:99999': port '99999' is not a number from 0 to 65535"),
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
fn bad_key_files_and_http_addresses_exit_2_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let empty = dir.path().join("empty.key");
    std::fs::write(&empty, "\n").unwrap();
    let missing = dir.path().join("missing.key");
    let good = dir.path().join("good.key");
    std::fs::write(&good, "hunter2").unwrap();
    let occupied = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = occupied.local_addr().unwrap().to_string();
    let base = ["node", "--id", "1", "--listen", "127.0.0.1:0", "--algorithm", "bully", "--peer", "2=127.0.0.1:9"];
    let path = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let spaced = dir.path().join("spaced.token");
    std::fs::write(&spaced, "two words\n").unwrap();
    let cases: [(Vec<String>, String); 7] = [
        (vec!["--key-file".into(), path(&missing)], format!("cannot read the key file {}", path(&missing))),
        (
            vec!["--key-file".into(), path(dir.path())],
            format!("the key file {} is not a regular file", path(dir.path())),
        ),
        (vec!["--key-file".into(), path(&empty)], format!("the key file {} is empty", path(&empty))),
        (vec!["--http".into(), "localhost:80".into()], "invalid value 'localhost:80' for '--http <ADDR>'".into()),
        (
            vec!["--key-file".into(), path(&good), "--http".into(), taken.clone()],
            format!("cannot serve HTTP on {taken}"),
        ),
        (
            vec!["--http".into(), "127.0.0.1:0".into(), "--http-token-file".into(), path(&empty)],
            format!("the token file {} is empty", path(&empty)),
        ),
        (
            vec!["--http".into(), "127.0.0.1:0".into(), "--http-token-file".into(), path(&spaced)],
            format!("the token file {} has a character that is not visible ASCII at byte 3", path(&spaced)),
        ),
    ];
    for (args, expected) in cases {
        let out = elect().args(base).args(["--data-dir", data.to_str().unwrap()]).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&expected) && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("hunter2"), "the key never shows: {stderr}");
        assert!(!data.join("state").exists(), "{args:?}: refused before the state file was written");
    }
    // A token guards the HTTP endpoint: without one it guards nothing, and is refused.
    let token = ["--data-dir", data.to_str().unwrap(), "--http-token-file", &path(&good)].map(String::from);
    let out = elect().args(base).args(token).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("required arguments were not provided: --http <ADDR>"), "{stderr}");
}

/// `GET path` over HTTP/1.1 on a fresh connection: the status line and the body.
fn get(addr: &str, path: &str) -> std::io::Result<(String, String)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    Ok((head.lines().next().unwrap_or("").to_owned(), body.to_owned()))
}

#[test]
fn three_processes_agree_on_the_strongest_and_its_epoch() {
    // Ports the OS picks, released just before the members bind them.
    let ports: Vec<u16> =
        (0..3).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    let http = format!("127.0.0.1:{}", TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port());
    let dir = tempfile::tempdir().unwrap();
    // Every member has the cluster key; member 1 serves HTTP.
    let key = dir.path().join("cluster.key");
    std::fs::write(&key, "a secret the three members share\n").unwrap();
    let (tx, rx) = mpsc::channel();
    let mut children = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let id = i + 1;
        let mut cmd = elect();
        cmd.args(["node", "--id", &id.to_string(), "--listen", &format!("127.0.0.1:{port}"), "--algorithm", "bully"]);
        cmd.args(["--data-dir", dir.path().join(id.to_string()).to_str().unwrap(), "--cluster", "cli-test"]);
        cmd.args(["--key-file", key.to_str().unwrap()]);
        if id == 1 {
            cmd.args(["--http", &http]);
        }
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
    let status = agreed.then(|| get(&http, "/status"));
    let metrics = agreed.then(|| get(&http, "/metrics"));
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(agreed, "no agreement on member 3: {latest:?}");
    let (line, body) = status.unwrap().unwrap();
    assert_eq!(line, "HTTP/1.1 200 OK");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((v["id"].as_u64(), v["leader"].as_u64(), v["state"].as_str()), (Some(1), Some(3), Some("normal")));
    assert_eq!(format!("{}@{}", v["leader"], v["epoch"]), latest[0]);
    let (line, body) = metrics.unwrap().unwrap();
    assert_eq!(line, "HTTP/1.1 200 OK");
    assert!(body.lines().any(|l| l == "elect_is_leader 0"), "{body}");
    assert!(body.lines().any(|l| l == "elect_packets_dropped_total{reason=\"unauthenticated\"} 0"), "{body}");
}

/// The log lines of a member of two (its peer never answers) that runs for a moment under `RUST_LOG=rust_log`,
/// then is stopped by closing its standard input.
fn logs_under(rust_log: &str) -> String {
    let free = || UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (port, peer) = (free(), free());
    let dir = tempfile::tempdir().unwrap();
    let mut child = elect()
        .args(["node", "--id", "1", "--listen", &format!("127.0.0.1:{port}"), "--algorithm", "bully"])
        .args(["--peer", &format!("2=127.0.0.1:{peer}"), "--cluster", "logs-test", "--stop-on-stdin-close"])
        .args(["--data-dir", dir.path().to_str().unwrap()])
        .env("RUST_LOG", rust_log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    drop(child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("RUST_LOG={rust_log}: the member did not stop when its standard input closed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut logs = String::new();
    child.stderr.take().unwrap().read_to_string(&mut logs).unwrap();
    logs
}

#[test]
fn rust_log_chooses_targets_and_levels_and_a_value_that_does_not_parse_is_reported() {
    // A target at debug: the member's packets are logged, and info lines still show for every target.
    let logs = logs_under("elect_net=debug,info");
    assert!(logs.lines().any(|l| l.contains("DEBUG") && l.contains("elect_net") && l.contains("sent")), "{logs}");
    assert!(logs.contains("INFO") && !logs.contains("does not parse"), "{logs}");
    // Warnings only: no info line.
    let logs = logs_under("warn");
    assert!(!logs.contains("INFO") && !logs.contains("DEBUG"), "{logs}");
    // A value that does not parse is named, and the member logs at info.
    let logs = logs_under("elect_net=loud");
    assert!(logs.contains("RUST_LOG does not parse") && logs.contains("elect_net=loud"), "{logs}");
    assert!(logs.contains("INFO") && !logs.contains("DEBUG"), "{logs}");
}
