//! The example application in a second language (examples/leader-app/leader_app.py, Python) against two real
//! `elect node` processes: it runs its command only while its member leads, stops it when its member resigns or
//! dies, and asks its member to resign when it is stopped itself. Needs `python3` (scripts/install-python).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Every wait gives up after this long.
const PATIENCE: Duration = Duration::from_secs(15);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Kills its process when dropped, so that a failed assertion leaves nothing running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `method path` over HTTP/1.1 with `headers`: the status code and the body.
fn http(port: u16, method: &str, path: &str, headers: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(stream, "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n{headers}\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.split(' ').nth(1).unwrap().parse().unwrap(), body.to_owned())
}

/// The lines an application printed, as they come.
struct Lines(mpsc::Receiver<String>, Vec<String>);

impl Lines {
    fn of(child: &mut Child) -> Self {
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Self(rx, Vec::new())
    }

    /// Waits for a line that contains `text`, and returns it.
    fn expect(&mut self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.0.recv_timeout(left) {
                Ok(line) => {
                    self.1.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => panic!("no line with {text:?} within {PATIENCE:?}; the lines so far: {:#?}", self.1),
            }
        }
    }
}

/// How many lines the file has (0 if it does not exist).
fn ticks(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |s| s.lines().count())
}

/// Whether `file` grows over a few hundred milliseconds.
fn growing(file: &Path) -> bool {
    let before = ticks(file);
    std::thread::sleep(Duration::from_millis(300));
    ticks(file) > before
}

#[test]
fn the_example_application_works_only_while_its_member_leads() {
    let found = Command::new("python3").arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "python3 is needed to run the example application: run scripts/install-python ({found:?})"
    );
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "a-token-for-the-example\n").unwrap();
    let udp: Vec<u16> = (0..2).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).collect();
    let web: Vec<u16> = (0..2).map(|_| free_port()).collect();
    let mut members = Vec::new();
    for i in 0..2 {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_elect"));
        cmd.args(["node", "--id", &(i + 1).to_string(), "--listen", &format!("127.0.0.1:{}", udp[i])]);
        cmd.args(["--algorithm", "bully", "--data-dir", dir.path().join(format!("m{i}")).to_str().unwrap()]);
        cmd.args(["--peer", &format!("{}=127.0.0.1:{}", 2 - i, udp[1 - i])]);
        cmd.args(["--http", &format!("127.0.0.1:{}", web[i]), "--http-token-file", token.to_str().unwrap()]);
        members.push(Running(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()));
    }
    let app = |i: usize| {
        let work = dir.path().join(format!("work{i}"));
        let mut cmd = Command::new("python3");
        cmd.arg(root().join("examples/leader-app/leader_app.py"));
        cmd.args(["--member", &format!("http://127.0.0.1:{}", web[i]), "--token-file", token.to_str().unwrap()]);
        cmd.args(["--patience", "1", "--", "sh", "-c"]);
        cmd.arg(format!("while :; do echo \"$ELECT_EPOCH\" >> {}; sleep 0.02; done", work.display()));
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
        let lines = Lines::of(&mut child);
        (Running(child), lines, work)
    };
    let (mut app1, mut lines1, work1) = app(0);
    let (app2, mut lines2, work2) = app(1);

    // Member 2, the stronger, leads: its application works, the other does not.
    let started = lines2.expect("leading under epoch");
    let epoch = started.split(' ').nth(3).unwrap().trim_end_matches(':').to_owned();
    assert!(growing(&work2));
    assert_eq!(std::fs::read_to_string(&work2).unwrap().lines().next(), Some(epoch.as_str()), "ELECT_EPOCH");
    assert_eq!(ticks(&work1), 0, "{:?}", lines1.1);

    // Member 2 resigns (a request with the token): its application stops, member 1's starts.
    let (status, body) = http(web[1], "POST", "/resign", "Authorization: Bearer a-token-for-the-example\r\n");
    assert_eq!(status, 202, "{body}");
    lines2.expect("not leading (leader ");
    assert!(!growing(&work2), "the work stopped with the leadership");
    lines1.expect("leading under epoch");
    assert!(growing(&work1));

    // Member 1 dies: its application stops its work once the member has not answered for its patience.
    drop(members.remove(0));
    lines1.expect("the member does not answer");
    assert!(!growing(&work1));
    // Member 2 leads again once its resign hold is over.
    lines2.expect("leading under epoch");
    assert!(growing(&work2));

    // Stopping the application stops the work and asks the member to resign.
    let pid = app2.0.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let stopping = lines2.expect("stopping: stopped");
    assert!(stopping.contains("asked the member to resign: 202"), "{stopping}");
    assert!(!growing(&work2));
    let (_, leader) = http(web[1], "GET", "/leader", "");
    let v: serde_json::Value = serde_json::from_str(&leader).unwrap();
    assert_eq!(v["is_leader"], false, "{v}");
    app1.0.kill().unwrap();
    drop(app2);
}
