//! `elect bench --serve`: load on `elect serve`, as a class would put it. Each of `clients` threads asks for
//! `requests` small simulations in turn (a few algorithms and sizes, a seed of its own each), on a connection per
//! request; a 503 is retried after the `Retry-After` it names. Reported: every answer by status (anything but 200
//! and 503 is an error), the latency of each answer (200s and 503s apart), and the time each simulation took to get
//! its 200, retries included.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::outcome::{BadInput, Outcome};

/// The simulations asked for, in turn.
const QUERIES: [&str; 4] = [
    "algorithm=chang-roberts&nodes=16&ids=random",
    "algorithm=bully&nodes=8&crash=8%400",
    "algorithm=hirschberg-sinclair&nodes=32&ids=random",
    "algorithm=lelann&nodes=8",
];

/// What one attempt got.
struct Attempt {
    status: u16,
    took: Duration,
    retry_after: Option<u64>,
}

fn ask(addr: &str, path: &str) -> Result<Attempt, String> {
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(60))).map_err(|e| e.to_string())?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").map_err(|e| format!("send: {e}"))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| format!("receive: {e}"))?;
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&raw);
    let head = text.split("\r\n\r\n").next().unwrap_or_default();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or("no status line")?;
    let retry_after = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("retry-after")))
        .and_then(|(_, v)| v.trim().parse().ok());
    Ok(Attempt { status, took, retry_after })
}

/// A server of our own, on a free port, for the length of the benchmark.
struct Own(Child);

impl Drop for Own {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_own() -> anyhow::Result<(Own, String)> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut first = String::new();
    BufReader::new(child.stdout.take().ok_or_else(|| BadInput("no stdout".into()))?).read_line(&mut first)?;
    let addr = first.split("http://").nth(1).and_then(|r| r.split_whitespace().next()).unwrap_or_default().to_owned();
    if addr.is_empty() {
        return Err(BadInput(format!("elect serve did not say where it listens: {first:?}")).into());
    }
    Ok((Own(child), addr))
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let k = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[k].as_secs_f64() * 1000.0
}

/// Every client's simulations, asked in turn, 503s retried after their `Retry-After`: every attempt, the time each
/// simulation took to get its 200, and the errors.
fn drive(addr: &str, clients: usize, requests: usize) -> (Vec<Attempt>, Vec<Duration>, Vec<String>) {
    let attempts: Mutex<Vec<Attempt>> = Mutex::new(Vec::new());
    let answered: Mutex<Vec<Duration>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for c in 0..clients {
            let (attempts, answered, errors) = (&attempts, &answered, &errors);
            scope.spawn(move || {
                for r in 0..requests {
                    let path = format!("/api/sim?{}&seed={}", QUERIES[(c + r) % QUERIES.len()], c * requests + r + 1);
                    let first = Instant::now();
                    for retry in 0.. {
                        match ask(addr, &path) {
                            Ok(a) => {
                                let (status, wait) = (a.status, a.retry_after);
                                attempts.lock().expect("no panic").push(a);
                                if status == 503 && retry < MAX_RETRIES {
                                    std::thread::sleep(Duration::from_secs(wait.unwrap_or(1)).min(MAX_WAIT));
                                    continue;
                                }
                                if status == 200 {
                                    answered.lock().expect("no panic").push(first.elapsed());
                                } else {
                                    errors.lock().expect("no panic").push(format!("{path}: status {status}"));
                                }
                            }
                            Err(e) => errors.lock().expect("no panic").push(format!("{path}: {e}")),
                        }
                        break;
                    }
                }
            });
        }
    });
    (
        attempts.into_inner().expect("no panic"),
        answered.into_inner().expect("no panic"),
        errors.into_inner().expect("no panic"),
    )
}

/// The most clients at once: one thread each.
const MAX_CLIENTS: usize = 1024;
/// The most requests per client.
const MAX_REQUESTS: usize = 100_000;
/// The most times a client asks again after a 503, and the longest it waits before it does, whatever the server's
/// Retry-After says: a server that is always busy ends the load with errors, not never.
const MAX_RETRIES: usize = 60;
const MAX_WAIT: Duration = Duration::from_secs(10);

pub(crate) fn run(addr: &str, clients: usize, requests: usize, json: bool) -> anyhow::Result<Outcome> {
    if !(1..=MAX_CLIENTS).contains(&clients) {
        return Err(BadInput(format!("--clients {clients}: give 1 to {MAX_CLIENTS} (a thread each)")).into());
    }
    if !(1..=MAX_REQUESTS).contains(&requests) {
        return Err(BadInput(format!("--requests {requests}: give 1 to {MAX_REQUESTS}")).into());
    }
    if !addr.is_empty() {
        use std::net::ToSocketAddrs;
        let found = addr.to_socket_addrs().map_err(|e| BadInput(format!("--serve {addr}: not host:port ({e})")))?;
        if found.count() == 0 {
            return Err(BadInput(format!("--serve {addr}: the name has no address")).into());
        }
    }
    let (_own, addr) = if addr.is_empty() {
        let (own, addr) = start_own()?;
        (Some(own), addr)
    } else {
        (None, addr.to_owned())
    };
    let started = Instant::now();
    let (attempts, mut answered, errors) = drive(&addr, clients, requests);
    let wall = started.elapsed().as_secs_f64();
    let mut ok: Vec<Duration> = attempts.iter().filter(|a| a.status == 200).map(|a| a.took).collect();
    let mut busy: Vec<Duration> = attempts.iter().filter(|a| a.status == 503).map(|a| a.took).collect();
    ok.sort();
    busy.sort();
    answered.sort();
    let figures = json!({
        "server": addr,
        "clients": clients,
        "requests_per_client": requests,
        "simulations_answered": answered.len(),
        "attempts": attempts.len(),
        "status_200": ok.len(),
        "status_503": busy.len(),
        "errors": errors.len(),
        "seconds": wall,
        "answers_per_second": ok.len() as f64 / wall,
        "latency_200_ms": { "p50": percentile(&ok, 0.5), "p99": percentile(&ok, 0.99), "max": percentile(&ok, 1.0) },
        "latency_503_ms": { "p50": percentile(&busy, 0.5), "p99": percentile(&busy, 0.99) },
        "until_answered_ms": { "p50": percentile(&answered, 0.5), "p99": percentile(&answered, 0.99) },
    });
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{figures}")?;
    } else {
        writeln!(out, "elect serve at {addr}: {clients} clients x {requests} small simulations, in {wall:.2} s")?;
        writeln!(
            out,
            "answers     {} x 200, {} x 503 (retried after Retry-After), {} errors",
            ok.len(),
            busy.len(),
            errors.len()
        )?;
        writeln!(
            out,
            "latency     200: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; 503: p50 {:.1} ms, p99 {:.1} ms",
            percentile(&ok, 0.5),
            percentile(&ok, 0.99),
            percentile(&ok, 1.0),
            percentile(&busy, 0.5),
            percentile(&busy, 0.99)
        )?;
        writeln!(
            out,
            "answered    p50 {:.1} ms, p99 {:.1} ms from the first attempt (retries included); {:.0} answers/s",
            percentile(&answered, 0.5),
            percentile(&answered, 0.99),
            ok.len() as f64 / wall
        )?;
        for e in errors.iter().take(5) {
            writeln!(out, "error       {e}")?;
        }
    }
    Ok(if errors.is_empty() { Outcome::Held } else { Outcome::Violated })
}
