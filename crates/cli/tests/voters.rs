//! `elect voters` against four real `elect node` processes: read the voters, add the learner, remove a voter; bad
//! addresses and flags exit 2.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn elect() -> Command {
    Command::new(env!("CARGO_BIN_EXE_elect"))
}

/// A free port on loopback (UDP or TCP), released just before a member binds it.
fn free_port(udp: bool) -> u16 {
    if udp {
        UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    } else {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }
}

/// `GET path`: the body, if the member answered.
fn get(addr: &str, path: &str) -> Option<serde_json::Value> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    serde_json::from_str(response.split_once("\r\n\r\n")?.1).ok()
}

/// Kills the members when the test ends, however it ends.
struct Members(Vec<Child>);

impl Drop for Members {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn voters(http: &[String], more: &[&str]) -> Output {
    let mut cmd = elect();
    cmd.arg("voters");
    for addr in http {
        cmd.args(["--http", addr]);
    }
    cmd.args(more).output().unwrap()
}

/// Waits until one of the members, the one `ok` accepts, says it leads and every member follows it.
fn until_leads(http: &[String], ok: impl Fn(usize) -> bool) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let status: Vec<_> = http.iter().map(|h| get(h, "/status")).collect();
        let leader = status.iter().position(|s| s.as_ref().is_some_and(|s| s["is_leader"] == true));
        if let Some(i) = leader.filter(|&i| ok(i + 1))
            && status.iter().all(|s| s.as_ref().is_some_and(|s| s["leader"] == i + 1))
        {
            return i + 1;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no member leads within 10 s");
}

#[test]
fn a_learner_is_added_and_a_voter_removed_from_the_command_line() {
    let udp: Vec<u16> = (0..4).map(|_| free_port(true)).collect();
    let http: Vec<String> = (0..4).map(|_| format!("127.0.0.1:{}", free_port(false))).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut members = Members(Vec::new());
    for i in 0..4 {
        let id = (i + 1).to_string();
        let mut cmd = elect();
        cmd.args(["node", "--id", &id, "--listen", &format!("127.0.0.1:{}", udp[i]), "--algorithm", "bully"]);
        cmd.args(["--data-dir", dir.path().join(&id).to_str().unwrap(), "--http", &http[i], "--voters", "1,2,3"]);
        for (j, p) in udp.iter().enumerate().filter(|&(j, _)| j != i) {
            cmd.args(["--peer", &format!("{}=127.0.0.1:{p}", j + 1)]);
        }
        members.0.push(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap());
    }
    // 4 is a learner: 3 leads.
    until_leads(&http, |id| id == 3);
    let read = voters(&http[..1], &[]);
    let text = String::from_utf8_lossy(&read.stdout);
    assert!(read.status.success() && text.contains("voters 1, 2, 3; learners 4"), "{text}");
    // Sent to every member's address, the change goes to the leader.
    let added = voters(&http, &["--add", "4"]);
    let text = String::from_utf8_lossy(&added.stdout);
    assert!(added.status.success(), "{text}{}", String::from_utf8_lossy(&added.stderr));
    assert!(text.contains("voters 1, 2, 3, 4; learners none") && text.contains("add 4: done"), "{text}");
    // Asked again, it changes nothing and succeeds.
    let again = voters(&http, &["--add", "4"]);
    assert!(again.status.success() && String::from_utf8_lossy(&again.stderr).contains("a voter already"));
    // 4, now a voter and the strongest, takes over; removing it hands leadership over first.
    until_leads(&http, |id| id == 4);
    let removed = voters(&http, &["--remove", "4"]);
    let (text, stderr) = (String::from_utf8_lossy(&removed.stdout), String::from_utf8_lossy(&removed.stderr));
    assert!(removed.status.success(), "{text}{stderr}");
    assert!(stderr.contains("handed leadership over to member 3 first"), "{stderr}");
    assert!(text.contains("voters 1, 2, 3; learners 4") && text.contains("remove 4: done"), "{text}");
    // Sent to a member that does not lead: refused, exit 1, naming why.
    let leader = until_leads(&http, |_| true);
    let follower = if leader == 1 { 2 } else { 1 };
    let refused = voters(&http[follower - 1..follower], &["--remove", "2"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("refused: only the leader changes the voters"), "{stderr}");
    let removed = voters(&http, &["--remove", "2", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&removed.stdout).unwrap();
    let learners = serde_json::json!([2, 4]);
    assert_eq!((&doc["outcome"]["state"], &doc["learners"]), (&serde_json::json!("done"), &learners));
}

#[test]
fn bad_addresses_and_flags_exit_2_naming_the_problem() {
    let closed = format!("127.0.0.1:{}", free_port(false));
    let out = voters(std::slice::from_ref(&closed), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("{closed}: cannot connect")), "{stderr}");
    let out = voters(&[closed], &["--add", "1", "--remove", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
    let out = elect().args(["voters", "--add", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--http <ADDR>"));
    let out = elect().args(["voters", "--http", "localhost"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected HOST:PORT"));
}
