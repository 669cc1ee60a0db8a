//! The container image and compose.yaml, run as a newcomer would: three members and the example application in
//! containers. Killing the leader's container moves leadership and the application's command to another member;
//! in the lease mode, cutting the leader's container off its network (`docker network disconnect`) never leaves
//! two members saying they lead at one instant; and the cluster grows to five voters and shrinks back to three
//! with `elect voters`, as the compose file's comment shows.
//!
//! Needs Docker with Compose and the image `elect:latest` (scripts/docker-image; scripts/test builds it from the
//! binary it has just tested, after scripts/install-docker). Ignored by `cargo test`; scripts/test runs it, and it
//! fails, naming what is missing, when Docker cannot be had.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use elect_core::{Epoch, NodeId};
use elect_lab::history::{Entry, overlap};

#[path = "common/server.rs"]
mod server;

/// The compose file's members publish fixed ports (9101..9103): one cluster at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Every wait gives up after this long.
const PATIENCE: Duration = Duration::from_secs(60);

#[test]
#[ignore = "needs Docker and the image elect:latest: scripts/test runs it"]
fn killing_the_leaders_container_moves_leadership_and_the_application() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cluster = Cluster::up("elect-test-kill", "");
    for port in PORTS {
        cluster.wait_for(port, |c| c["leader"] == 3, "member 3 (Bully's strongest) leads");
    }
    cluster.wait_for_log("app3", "serving as the leader");

    let killed = Instant::now();
    cluster.compose(&["kill", "member3"]);
    for port in &PORTS[..2] {
        cluster.wait_for(*port, |c| c["leader"] == 2 && c["latest"] == c["version"], "member 2 leads");
    }
    let failover = killed.elapsed();
    cluster.wait_for_log("app2", "serving as the leader");
    cluster.wait_for_log("app3", "the member does not answer");
    println!("failover after killing the leader's container: {} ms (seen from the host)", failover.as_millis());

    // Started again, the strongest takes leadership back, and the application follows it.
    cluster.compose(&["start", "member3"]);
    for port in PORTS {
        cluster.wait_for(port, |c| c["leader"] == 3, "member 3 leads again");
    }
    cluster.wait_for_log("app2", "not leading");
    cluster.wait_for_logs("app3", "started sh", 2);
}

#[test]
#[ignore = "needs Docker and the image elect:latest: scripts/test runs it"]
fn a_leader_cut_off_its_network_stops_leading_before_another_starts() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cluster = Cluster::up_in_the_lease_mode("elect-test-lease");
    let member3 = cluster.container("member3");
    let network = format!("{}_default", cluster.project);
    docker(&["network", "disconnect", &network, &member3]);
    for port in &PORTS[..2] {
        cluster.wait_for(*port, |c| c["leader"] == 2 && c["latest"] == c["version"], "member 2 leads the majority");
    }
    cluster.wait_for_log("member3", "stopped leading");
    docker(&["network", "connect", "--alias", "member3", &network, &member3]);
    for port in PORTS {
        cluster.wait_for(port, |c| c["leader"] == 3 && c["latest"] == c["version"], "member 3 leads again");
    }

    // The log lines behind what the endpoints showed.
    cluster.wait_for_logs("member3", "started leading", 2);
    cluster.wait_for_log("member2", "stopped leading");
    let entries = leadership(&cluster.logs(&["member1", "member2", "member3"]));
    let leads = |m: u32| entries.iter().filter(|e| e.member == m && e.leads()).count();
    assert!(
        leads(2) >= 1 && leads(3) >= 2,
        "expected member 3 to lead, then member 2, then member 3 again; the history: {entries:#?}"
    );
    let end_ms = entries.last().map_or(0.0, |e| e.at_ms);
    let both = overlap(&entries, &[], end_ms);
    assert!(
        both.stretches == 0,
        "two members said they led at one instant in the lease mode ({both:?}); the history: {entries:#?}"
    );
    // Member 2 taking over from 3: its first lead after 3 led (at the start, 2 may lead for a moment before 3 is
    // up).
    let led3 = entries.iter().position(|e| e.member == 3 && e.leads()).unwrap();
    let second = entries[led3..].iter().find(|e| e.member == 2 && e.leads()).unwrap();
    let first = entries.iter().rfind(|e| e.member == 3 && !e.leads() && e.at_ms <= second.at_ms).unwrap();
    println!(
        "lease mode, leader cut off: member 3 stopped leading {:.1} ms before member 2 started",
        second.at_ms - first.at_ms
    );
}

#[test]
#[ignore = "needs Docker and the image elect:latest: scripts/test runs it"]
fn the_cluster_grows_to_five_voters_and_shrinks_back_to_three() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cluster = Cluster::up_in_the_lease_mode("elect-test-grow");
    cluster.compose(&["--profile", "grow", "up", "-d", "member4", "member5"]);
    for port in [9104, 9105] {
        cluster.wait_for(port, |c| c["leader"] == 3, "the learner follows member 3");
    }
    // Bully's strongest voter leads: each member added takes over, and each removed hands over first.
    let steps = [("--add", 4, 4, 4), ("--add", 5, 5, 5), ("--remove", 5, 4, 4), ("--remove", 4, 3, 3)];
    for (change, id, voters, leader) in steps {
        let started = Instant::now();
        let out = cluster.voters(&[change, &id.to_string()]);
        assert!(out.contains(": done"), "{change} {id}: {out}");
        let ports = [9101, 9102, 9103, 9104, 9105];
        for port in ports {
            cluster.wait_for(port, |c| c["leader"] == leader, &format!("member {leader} leads after {change} {id}"));
        }
        println!(
            "{change} {id}: done, and every member follows {leader}, {} ms (seen from the host)",
            started.elapsed().as_millis()
        );
        let shown = get(9101, "/voters").unwrap();
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(shown["voters"].as_array().unwrap().len(), voters, "{shown}");
    }
    // The example application follows its member back to leading.
    cluster.wait_for_logs("app3", "started sh", 2);

    // From the members' own logs: never two members leading at one instant, and how long each handover left the
    // cluster without a leader.
    let entries = leadership(&cluster.logs(&["member1", "member2", "member3", "member4", "member5"]));
    let end_ms = entries.last().map_or(0.0, |e| e.at_ms);
    let both = overlap(&entries, &[], end_ms);
    assert_eq!(both.stretches, 0, "two members led at one instant ({both:?}); the history: {entries:#?}");
    let mut stopped = None;
    let mut gaps = Vec::new();
    for e in &entries {
        match (e.leads(), stopped.take()) {
            (true, Some((from, at))) => gaps.push(format!("{from} to {}: {:.1} ms", e.member, e.at_ms - at)),
            (false, _) => stopped = Some((e.member, e.at_ms)),
            (true, None) => {}
        }
    }
    assert!(gaps.len() >= 4, "a handover per change; the history: {entries:#?}");
    println!("lease mode, without a leader at each handover: {}", gaps.join(", "));
}

/// A compose project of the repository's compose.yaml, taken down (with its volumes) when dropped.
struct Cluster {
    project: String,
}

impl Cluster {
    fn up(project: &str, flags: &str) -> Self {
        let cluster = Self { project: project.to_owned() };
        // What an earlier, interrupted run left.
        let _ = cluster.try_compose(&["--profile", "grow", "down", "-v", "--remove-orphans"], "");
        cluster.compose_with(&["up", "-d"], flags);
        cluster
    }

    /// [`Self::up`] in the lease mode, once member 3 (Bully's strongest voter) leads and every member knows it.
    fn up_in_the_lease_mode(project: &str) -> Self {
        let cluster = Self::up(project, "--lease");
        for port in PORTS {
            cluster.wait_for(port, |c| c["leader"] == 3 && c["latest"] == c["version"], "member 3 leads");
        }
        cluster
    }

    /// What `services` logged, one after the other.
    fn logs(&self, services: &[&str]) -> String {
        services.iter().map(|service| self.compose(&["--profile", "grow", "logs", "--no-color", service])).collect()
    }

    fn compose(&self, args: &[&str]) -> String {
        self.compose_with(args, "")
    }

    fn compose_with(&self, args: &[&str], flags: &str) -> String {
        let out = self.try_compose(args, flags);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "compose {} failed ({}): {}{}",
            args.join(" "),
            out.status,
            text,
            String::from_utf8_lossy(&out.stderr)
        );
        text
    }

    fn try_compose(&self, args: &[&str], flags: &str) -> Output {
        let (program, first) = compose_command();
        Command::new(program)
            .args(first)
            .args(["-p", &self.project, "-f"])
            .arg(root().join("compose.yaml"))
            .args(args)
            .env("ELECT_FLAGS", flags)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}; the Docker tests need Docker with Compose"))
    }

    /// `elect voters ARGS` run in member 1's container, given every member's address and the members' token:
    /// what it printed.
    fn voters(&self, args: &[&str]) -> String {
        let mut all = vec!["exec", "-T", "member1", "elect", "voters"];
        for member in ["member1:9101", "member2:9101", "member3:9101", "member4:9101", "member5:9101"] {
            all.extend(["--http", member]);
        }
        all.extend(["--http-token-file", "/run/elect/http-token"]);
        all.extend(args);
        self.compose(&all)
    }

    /// The id of a service's container.
    fn container(&self, service: &str) -> String {
        let id = self.compose(&["ps", "-q", service]).trim().to_owned();
        assert!(!id.is_empty(), "no container for {service}");
        id
    }

    /// Waits until the member behind `port` shows a change for which `ok` holds.
    fn wait_for(&self, port: u16, ok: impl Fn(&serde_json::Value) -> bool, what: &str) {
        let deadline = Instant::now() + PATIENCE;
        let mut last = String::from("no answer yet");
        while Instant::now() < deadline {
            match get(port, "/leader") {
                Ok(body) => match serde_json::from_str::<serde_json::Value>(&body) {
                    Ok(change) if ok(&change) => return,
                    _ => last = body,
                },
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("port {port}: not within {PATIENCE:?}: {what}; last answer: {last}\n{}", self.everything_logged());
    }

    /// Waits until a service has logged a line containing `text`.
    fn wait_for_log(&self, service: &str, text: &str) {
        self.wait_for_logs(service, text, 1);
    }

    /// Waits until a service has logged `times` lines containing `text`.
    fn wait_for_logs(&self, service: &str, text: &str, times: usize) {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if self.compose(&["logs", "--no-color", service]).lines().filter(|l| l.contains(text)).count() >= times {
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("{service} did not log {text:?} {times} times within {PATIENCE:?}\n{}", self.everything_logged());
    }

    fn everything_logged(&self) -> String {
        let out = self.try_compose(&["logs", "--no-color"], "");
        format!("the cluster's logs:\n{}", String::from_utf8_lossy(&out.stdout))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.try_compose(&["--profile", "grow", "down", "-v", "--remove-orphans", "-t", "2"], "");
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn docker(args: &[&str]) -> String {
    let out = Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run docker: {e}; the Docker tests need Docker (scripts/install-docker)"));
    assert!(out.status.success(), "docker {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The published HTTP ports of the members that start, member 1's first (members 4 and 5, of the profile `grow`,
/// publish 9104 and 9105).
const PORTS: [u16; 3] = [9101, 9102, 9103];

/// `docker compose` (Compose v2), or `docker-compose` (v1) where only that is installed.
fn compose_command() -> (&'static str, &'static [&'static str]) {
    let v2 = Command::new("docker").args(["compose", "version"]).output().is_ok_and(|o| o.status.success());
    if v2 { ("docker", &["compose"]) } else { ("docker-compose", &[]) }
}

/// `GET path` on 127.0.0.1:port: the body of a 200 answer.
fn get(port: u16, path: &str) -> std::io::Result<String> {
    let reply = server::try_request(&format!("127.0.0.1:{port}"), "GET", path, None)?;
    match reply.status {
        200 => Ok(reply.body),
        status => Err(std::io::Error::other(format!("{status}: {}", reply.body))),
    }
}

/// The members' "started leading" and "stopped leading" lines, merged in time order, as a history for the judge
/// of `elect cluster` ([`elect_lab::history`]). Every container reads the host's clock, so the members' timestamps
/// compare; the history begins at the first line.
fn leadership(logs: &str) -> Vec<Entry> {
    let mut lines: Vec<(i64, Entry)> = logs
        .lines()
        .filter_map(|line| {
            let started = line.contains("started leading");
            if !started && !line.contains("stopped leading") {
                return None;
            }
            let field = |name: &str| line.split_whitespace().find_map(|w| w.strip_prefix(name));
            let at = line.split_whitespace().find_map(timestamp_us);
            // The member's span: `member{id=3}:`.
            let member = line.split_once("{id=").and_then(|(_, rest)| rest.split('}').next()?.parse().ok());
            let (round, granter) = field("epoch=").and_then(|v| v.split_once('.')).unwrap_or(("0", "0"));
            let (round, granter) = (round.parse().unwrap_or(0), NodeId(granter.parse().unwrap_or(0)));
            let epoch = Epoch::of(round, granter);
            let (Some(at), Some(member)) = (at, member) else { panic!("no timestamp or member id in {line:?}") };
            let leader = started.then_some(member);
            Some((at, Entry { at_ms: 0.0, member, leader, epoch }))
        })
        .collect();
    lines.sort_by_key(|&(at, _)| at);
    let start = lines.first().map_or(0, |&(at, _)| at);
    lines.into_iter().map(|(at, e)| Entry { at_ms: (at - start) as f64 / 1000.0, ..e }).collect()
}

/// `2026-12-04T10:23:45.123456Z` (tracing's timestamps, in UTC) as microseconds since 1970.
fn timestamp_us(word: &str) -> Option<i64> {
    let (date, time) = word.strip_suffix('Z')?.split_once('T')?;
    let mut ymd = date.split('-').map(|p| p.parse::<i64>());
    let (y, m, d) = (ymd.next()?.ok()?, ymd.next()?.ok()?, ymd.next()?.ok()?);
    let (hms, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let mut parts = hms.split(':').map(|p| p.parse::<i64>());
    let (h, min, sec) = (parts.next()?.ok()?, parts.next()?.ok()?, parts.next()?.ok()?);
    let micros: i64 = format!("{fraction:0<6}").get(..6)?.parse().ok()?;
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some(((days * 24 + h) * 60 + min) * 60_000_000 + sec * 1_000_000 + micros)
}

#[test]
fn timestamps_and_spans_are_read_from_the_members_logs() {
    assert_eq!(timestamp_us("1970-01-01T00:00:01.5Z"), Some(1_500_000));
    assert_eq!(timestamp_us("2000-03-01T00:00:00.000001Z"), Some(951_868_800_000_001));
    assert_eq!(timestamp_us("INFO"), None);
    let log = "member3_1  | 2026-12-04T10:00:00.100000Z  INFO member{id=3}: elect_net::runner: started leading epoch=1.3\n\
               member2_1  | 2026-12-04T10:00:04.999999Z  INFO member{id=2}: elect_net::runner: started leading epoch=2.2\n\
               member3_1  | 2026-12-04T10:00:05.000000Z  INFO member{id=3}: elect_net::runner: stopped leading epoch=1.3\n";
    let entries = leadership(log);
    let members: Vec<u32> = entries.iter().map(|e| e.member).collect();
    assert_eq!(members, [3, 2, 3], "in time order");
    assert_eq!(entries[2].at_ms, 4_900.0);
    assert_eq!(entries[1].epoch, Epoch::of(2, NodeId(2)));
    assert!(entries[1].leads() && !entries[2].leads());
    assert_eq!(overlap(&entries, &[], 6_000.0).stretches, 1, "member 2 started 1 us before member 3 stopped");
    assert_eq!(overlap(&entries[..1], &[], 6_000.0).stretches, 0);
}
