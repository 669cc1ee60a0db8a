//! `elect serve`'s HTTP API against the command line: the same flags give the same JSON; every limit, malformed
//! parameter and file name gets 400 naming it; a server saturated with requests answers 503 with Retry-After; and
//! the explorer steps untimed Bully on three processes into its two-coordinator state.

#[path = "common/server.rs"]
mod server;

use serde_json::{Value, json};
use server::{Server, elect, flags};

/// `GET /api/sim?Q` is what `elect sim FLAGS --json` prints, byte for byte.
#[test]
fn sim_answers_what_the_command_line_prints() {
    let server = Server::start(&[]);
    let queries = [
        "algorithm=chang-roberts&nodes=8&ids=descending",
        "algorithm=bully&nodes=5&crash=5%400&seed=3",
        "algorithm=hirschberg-sinclair&nodes=16&ids=random&seed=7",
        "algorithm=bully&nodes=5&initiators=1&crash=5%400&partition=1,2%7C3,4%401..4",
        "algorithm=chang-roberts&nodes=6&delay=uniform:1..3&links=unordered&seed=2&loss=0.1",
        "algorithm=floodmax&nodes=6&topology=grid:2x3&synchronizer=alpha",
        "algorithm=bully&nodes=4&monitor&crash-leader-at=5",
    ];
    for q in queries {
        let reply = server.get(&format!("/api/sim?{q}"));
        assert_eq!(reply.status, 200, "{q}: {}", reply.body);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        let mut args = vec!["sim".to_owned()];
        args.extend(flags(q));
        args.push("--json".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = elect(&args);
        assert!(code == 0 || code == 1, "{args:?}: {stderr}");
        let outcome = if code == 0 { "held" } else { "violated" };
        assert_eq!(reply.header("x-elect-outcome"), Some(outcome), "{q}");
        let (served, printed): (Value, Value) =
            (serde_json::from_str(&reply.body).unwrap(), serde_json::from_str(&stdout).unwrap());
        assert_eq!(served, printed, "{q}");
        assert_eq!(reply.body, stdout, "{q}: the same bytes");
    }
}

/// `GET /api/check?Q` is what `elect check FLAGS --json` prints, but for the seconds it took.
#[test]
fn check_answers_what_the_command_line_prints() {
    let server = Server::start(&[]);
    for q in [
        "algorithm=bully&nodes=3",
        "algorithm=chang-roberts&nodes=4&network=unordered",
        "algorithm=lelann&nodes=3&every-arrangement",
    ] {
        let reply = server.get(&format!("/api/check?{q}"));
        assert_eq!(reply.status, 200, "{q}: {}", reply.body);
        let mut args = vec!["check".to_owned()];
        args.extend(flags(q));
        args.push("--json".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = elect(&args);
        assert!(code == 0 || code == 1, "{args:?}: {stderr}");
        let strip = |mut v: Value| {
            fn walk(v: &mut Value) {
                match v {
                    Value::Object(m) => {
                        m.remove("seconds");
                        m.values_mut().for_each(walk);
                    }
                    Value::Array(a) => a.iter_mut().for_each(walk),
                    _ => {}
                }
            }
            walk(&mut v);
            v
        };
        let (served, printed): (Value, Value) =
            (serde_json::from_str(&reply.body).unwrap(), serde_json::from_str(&stdout).unwrap());
        assert_eq!(strip(served), strip(printed), "{q}");
    }
    let bully = server.get("/api/check?algorithm=bully&nodes=3").json();
    assert_eq!(bully["counterexample"]["property"], "uniqueness");
}

/// Every limit of the server: a request over it gets 400, and the message names it.
#[test]
fn every_limit_gets_400_naming_it() {
    let server = Server::start(&[
        "--max-nodes",
        "50",
        "--max-check-nodes",
        "4",
        "--max-events",
        "1000",
        "--max-states",
        "500",
        "--max-memory",
        "512M",
        "--max-seconds",
        "20",
        "--max-runs",
        "10",
    ]);
    let refused = |path: &str, named: &str| {
        let reply = server.get(path);
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        assert!(reply.body.contains(named), "{path}: {named} not named in {}", reply.body);
        assert_eq!(reply.body.trim().lines().count(), 1, "one line: {}", reply.body);
    };
    // Processes.
    refused("/api/sim?algorithm=chang-roberts&nodes=51", "--max-nodes");
    refused("/api/sim?algorithm=chang-roberts&nodes=8&max-nodes=100", "--max-nodes");
    let ids: Vec<String> = (1..=60).map(|i| i.to_string()).collect();
    refused(&format!("/api/sim?algorithm=chang-roberts&ids={}", ids.join(",")), "--max-nodes");
    refused("/api/check?algorithm=bully&nodes=5", "--max-check-nodes");
    // Events: asked for, and reached.
    refused("/api/sim?algorithm=chang-roberts&nodes=8&max-events=5000", "--max-events");
    refused("/api/sim?algorithm=chang-roberts&nodes=50&ids=descending", "--max-events");
    let cut = server.get("/api/sim?algorithm=chang-roberts&nodes=50&ids=descending&max-events=1000");
    assert_eq!(cut.status, 200, "a run cut short at the bound it asked for is reported: {}", cut.body);
    assert_eq!(cut.json()["terminated"], false);
    // States: asked for, and reached.
    refused("/api/check?algorithm=bully&nodes=4&max-states=100000", "--max-states");
    refused("/api/check?algorithm=bully&nodes=4&network=unordered&timed", "--max-states");
    let partial = server.get("/api/check?algorithm=bully&nodes=4&network=unordered&timed&max-states=200");
    assert_eq!(partial.status, 200, "{}", partial.body);
    assert_eq!(partial.json()["stopped"], "--max-states");
    // Memory and seconds, asked for.
    refused("/api/check?algorithm=bully&nodes=3&max-memory=4G", "--max-memory");
    refused("/api/check?algorithm=bully&nodes=3&max-time=100", "--max-time");
    // The runs of a sweep, and its processes.
    refused("/api/sweep?algorithms=chang-roberts,lelann&nodes=4..32&seeds=3", "--max-runs");
    refused("/api/sweep?algorithms=chang-roberts&nodes=64&seeds=1", "--max-nodes");
    let ok = server.get("/api/sweep?algorithms=chang-roberts,lelann&nodes=4..16&seeds=1");
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.json()["rows"].as_array().unwrap().len(), 6);
    // An explorer session, likewise.
    let reply = server.post("/api/explore", r#"{"algorithm": "bully", "nodes": 5}"#);
    assert_eq!(reply.status, 400);
    assert!(reply.body.contains("--max-check-nodes"), "{}", reply.body);
}

/// Seconds, reached: a check that would run longer than the server allows gets 400 naming the limit.
#[test]
fn a_request_over_the_time_limit_gets_400() {
    let server = Server::start(&["--max-seconds", "0.3", "--max-states", "100000000"]);
    let reply = server.get("/api/check?algorithm=bully&nodes=6&network=unordered&timed&crashes=1");
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(reply.body.contains("--max-seconds"), "{}", reply.body);
    assert_eq!(server.get("/api/sim?algorithm=bully&nodes=3").status, 200, "the server goes on");
    // The pictures of a dense run: its trace watches the time limit, where the run reported its progress too
    // seldom to be stopped (Bully on 1,000 processes ran on for a minute after the limit).
    let started = std::time::Instant::now();
    let reply = server.get("/api/sim/view?algorithm=bully&nodes=1000");
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(reply.body.contains("--max-seconds"), "{}", reply.body);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "answered after {:?}", started.elapsed());
}

/// Malformed parameters: 400 with the message the command line prints for the same flags.
#[test]
fn malformed_parameters_get_the_command_lines_message() {
    let server = Server::start(&[]);
    for (path, args) in [
        ("/api/sim?algorithm=bully&nodes=x", vec!["sim", "--algorithm=bully", "--nodes=x"]),
        ("/api/sim?algorithm=nope&nodes=3", vec!["sim", "--algorithm=nope", "--nodes=3"]),
        ("/api/sim?algorithm=bully&nodes=3&bogus=1", vec!["sim", "--algorithm=bully", "--nodes=3", "--bogus=1"]),
        ("/api/sim?algorithm=bully&nodes=3&crash=9%400", vec!["sim", "--algorithm=bully", "--nodes=3", "--crash=9@0"]),
        ("/api/sim?nodes=3", vec!["sim", "--nodes=3"]),
        (
            "/api/check?algorithm=bully&nodes=3&network=wobbly",
            vec!["check", "--algorithm=bully", "--nodes=3", "--network=wobbly"],
        ),
        ("/api/check?algorithm=bully", vec!["check", "--algorithm=bully"]),
        ("/api/sim?algorithm=nope", vec!["sim", "--algorithm=nope"]),
        (
            "/api/sim?algorithm=bully&monitor&bare-monitor",
            vec!["sim", "--algorithm=bully", "--monitor", "--bare-monitor"],
        ),
        ("/api/sim?scenario=stoller&nodes=3", vec!["sim", "--scenario=stoller", "--nodes=3"]),
        ("/api/sim?algorithm=bully&nodes=3&nodes=4", vec!["sim", "--algorithm=bully", "--nodes=3", "--nodes=4"]),
        ("/api/sweep?algorithms=bully", vec!["sweep", "--algorithms=bully"]),
    ] {
        let reply = server.get(path);
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        let (code, _, stderr) = elect(&args);
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(reply.body, stderr, "{path}: the command line's own message");
    }
    // An unknown algorithm is named before anything else is asked for.
    let reply = server.get("/api/sim?algorithm=nope");
    assert!(reply.body.contains("unknown algorithm 'nope'"), "{}", reply.body);
    let reply = server.get("/api/sim?algorithm=bully&--nodes=3");
    assert_eq!(reply.status, 400);
    assert_eq!(server.get("/api/nothing").status, 404);
    assert_eq!(server.request("DELETE", "/api/sim", None).status, 405);
}

/// No file is read or written without --allow-files; with it, a scenario file runs as on the command line.
#[test]
fn files_are_refused_unless_allowed() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("run.html");
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/bully-figure.toml");
    for path in [
        "/api/sim?algorithm=bully&topology=file:/etc/hostname".to_owned(),
        format!("/api/sim?scenario={scenario}"),
        format!("/api/sim?algorithm=bully&nodes=3&html={}", html.display()),
        "/api/sim?algorithm=bully&nodes=3&trace=-".to_owned(),
        format!("/api/check?algorithm=bully&nodes=3&save={}", html.display()),
        "/api/sweep?algorithms=bully&nodes=4&out=/tmp/x.csv".to_owned(),
    ] {
        let reply = server.get(&path);
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        assert!(reply.body.contains("--allow-files"), "{path}: {}", reply.body);
    }
    assert!(!html.exists());

    let open = Server::start(&["--allow-files"]);
    let reply = open.get(&format!("/api/sim?scenario={scenario}"));
    let (_, stdout, stderr) = elect(&["sim", "--scenario", scenario, "--json"]);
    assert_eq!(reply.body, stdout, "{stderr}");
    let reply = open.get(&format!("/api/sim?algorithm=bully&nodes=3&html={}", html.display()));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    assert_eq!(open.get("/api/sim?algorithm=bully&nodes=3&trace=-").status, 400, "never the server's stdout");
}

/// Beyond --max-requests computing at once: 503 with Retry-After, and the server answers again afterwards.
#[test]
fn a_saturated_server_answers_503_with_retry_after() {
    let server = Server::start(&["--max-requests", "1", "--max-seconds", "3", "--max-states", "100000000"]);
    let addr = server.addr.clone();
    let slow = std::thread::spawn(move || {
        server::request(&addr, "GET", "/api/check?algorithm=bully&nodes=6&network=unordered&timed&crashes=1", None)
    });
    let mut busy = None;
    for _ in 0..200 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let reply = server.get("/api/sim?algorithm=bully&nodes=3");
        if reply.status == 503 {
            busy = Some(reply);
            break;
        }
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let busy = busy.expect("a 503 while the slow request computes");
    assert_eq!(busy.header("retry-after"), Some("1"));
    assert!(busy.body.contains("busy"), "{}", busy.body);
    slow.join().unwrap();
    assert_eq!(server.get("/api/sim?algorithm=bully&nodes=3").status, 200, "free again");
    assert!(server.get("/").body.contains("<html"), "the page");
}

fn step(server: &Server, session: &str, action: &Value) -> Value {
    let reply = server.post(&format!("/api/explore/{session}/step"), &json!({ "action": action }).to_string());
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

fn property<'a>(state: &'a Value, name: &str) -> &'a str {
    let all = state["state"]["properties"].as_array().unwrap();
    all.iter().find(|p| p["property"] == name).and_then(|p| p["result"].as_str()).unwrap_or("absent")
}

/// Untimed Bully on three processes, stepped by hand into its two-coordinator state, back out, and in again.
#[test]
fn the_explorer_steps_untimed_bully_into_two_coordinators() {
    let server = Server::start(&["--max-sessions", "3"]);
    let open = server.post("/api/explore", r#"{"algorithm": "bully", "nodes": 3}"#);
    assert_eq!(open.status, 200, "{}", open.body);
    let start = open.json();
    let session = start["session"].as_str().unwrap().to_owned();
    assert_eq!(start["state"]["processes"].as_array().unwrap().len(), 3);
    assert!(!start["actions"].as_array().unwrap().is_empty());
    assert!(!start["state"]["links"].as_array().unwrap().is_empty(), "the initiators' messages in flight");
    assert_eq!(property(&start, "uniqueness"), "held");

    // The checker finds the way; each of its steps is then taken by its index among the actions enabled.
    let found = server.post(&format!("/api/explore/{session}/find"), r#"{"goal": "violation"}"#).json();
    let path = found["found"]["path"].as_array().unwrap().clone();
    assert!(!path.is_empty());
    let mut now = start;
    for action in &path {
        let index = now["actions"].as_array().unwrap().iter().position(|a| &a["action"] == action).unwrap();
        now = step(&server, &session, &json!(index));
    }
    assert_eq!(property(&now, "uniqueness"), "violated", "{now}");
    let leaders: Vec<&Value> =
        now["state"]["processes"].as_array().unwrap().iter().filter(|p| p["status"]["leader"] == p["id"]).collect();
    assert!(leaders.len() >= 2 || now["step"]["violations"].to_string().contains("both declared"), "{now}");

    // Back one step: uniqueness holds again; the same step: violated again.
    let back = server.post(&format!("/api/explore/{session}/back"), "").json();
    assert_eq!(property(&back, "uniqueness"), "held");
    let again = step(&server, &session, path.last().unwrap());
    assert_eq!(property(&again, "uniqueness"), "violated");

    // A shortest path to a leader from a fresh session; an action not enabled is refused.
    let fresh = server.post("/api/explore", r#"{"algorithm": "bully", "nodes": 3}"#).json();
    let id = fresh["session"].as_str().unwrap();
    let leader = server.post(&format!("/api/explore/{id}/find"), r#"{"goal": "leader"}"#).json();
    assert!(!leader["found"]["path"].as_array().unwrap().is_empty());
    assert_eq!(server.post(&format!("/api/explore/{id}/step"), r#"{"action": 999}"#).status, 400);

    // Sessions beyond --max-sessions end the oldest.
    for _ in 0..3 {
        assert_eq!(server.post("/api/explore", r#"{"algorithm": "lelann", "nodes": 3}"#).status, 200);
    }
    assert_eq!(server.get(&format!("/api/explore/{session}")).status, 404);
}

/// The explorer's state names the links a scheduled fault cuts now, as the pictures draw them: a partition from
/// the start cuts both ways between its sides, a link down one way only that way; once they heal, none.
#[test]
fn the_explorer_says_which_links_a_fault_cuts() {
    let server = Server::start(&[]);
    let body = json!({
        "algorithm": "bully", "nodes": 3, "timed": true, "initiators": "1",
        "partition": "1|2,3@0..3", "link-down": "3>2@0..3",
    });
    let open = server.post("/api/explore", &body.to_string());
    assert_eq!(open.status, 200, "{}", open.body);
    let start = open.json();
    let mut broken: Vec<(u64, u64)> = start["state"]["broken"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l[0].as_u64().unwrap(), l[1].as_u64().unwrap()))
        .collect();
    broken.sort_unstable();
    assert_eq!(broken, [(1, 2), (1, 3), (2, 1), (3, 1), (3, 2)], "{}", start["state"]);
    // Time passes until both heal at 3 (a wait is the last action listed while one is enabled).
    let session = start["session"].as_str().unwrap().to_owned();
    let mut now = start;
    for _ in 0..200 {
        if now["state"]["now"].as_f64().unwrap_or(0.0) >= 3.0 {
            break;
        }
        let actions = now["actions"].as_array().unwrap();
        let wait = actions.iter().position(|a| a["action"]["do"] == "wait").unwrap_or(0);
        now = step(&server, &session, &json!(wait));
    }
    assert!(now["state"]["now"].as_f64().unwrap() >= 3.0, "{}", now["state"]);
    assert_eq!(now["state"]["broken"], json!([]), "healed at 3: {}", now["state"]);
}

/// A program the server was started with is explored in its own words; one it was not started with is refused,
/// so that no request can make the server start a program.
#[test]
fn the_explorer_shows_a_program_in_its_words_and_runs_no_other() {
    let program = concat!("exec:", env!("CARGO_MANIFEST_DIR"), "/../../examples/python/chang_roberts.py");
    let closed = Server::start(&[]);
    let refused = closed.post("/api/explore", &json!({ "algorithm": program, "nodes": 3 }).to_string());
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("is not one of the programs this server was started with"), "{}", refused.body);
    assert_eq!(closed.get(&format!("/api/sim?algorithm={program}&nodes=3")).status, 400);

    let server = Server::start(&["--program", program]);
    assert_eq!(server.get("/api/limits").json()["programs"], json!([program]));
    let open = server.post("/api/explore", &json!({ "algorithm": program, "nodes": 3 }).to_string());
    assert_eq!(open.status, 200, "{}", open.body);
    let start = open.json();
    let session = start["session"].as_str().unwrap().to_owned();
    let roles = |state: &Value| -> Vec<String> {
        let processes = state["state"]["processes"].as_array().unwrap();
        processes.iter().map(|p| p["view"]["role"].as_str().unwrap_or("").to_owned()).collect()
    };
    assert_eq!(roles(&start), ["candidate"; 3], "every process initiated: {}", start["state"]);
    // Deliver every token once: each step names one of the rules the program declared.
    let declared = ["relay", "forward a stronger token", "swallow a weaker token", "own token returned, elected"];
    let mut last = start;
    for _ in 0..3 {
        last = step(&server, &session, &json!(0));
        let rule = last["step"]["rule"].as_str().unwrap_or("");
        assert!(declared.contains(&rule), "{}", last["step"]);
    }
    assert!(roles(&last).iter().any(|r| r == "lost"), "{:?}", roles(&last));
    let rules = server.get(&format!("/api/rules?algorithm={program}")).json();
    assert_eq!(rules["rules"].as_array().unwrap().len(), 7, "{rules}");
}
