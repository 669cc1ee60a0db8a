//! `elect voters`: read or change the voters of a running cluster through its members' HTTP endpoints
//! (`elect node --http`). Given the address of one member or of several, it reads `GET /voters` and `GET /status`
//! to find the leader among them, and sends it `POST /voters?add=ID` or `?remove=ID`; the change is answered once
//! it is done (exit 0), refused (exit 1, with the reason), or given up (exit 1: it may or may not take effect).
//! Adding a voter or removing a learner changes nothing and succeeds, so that a script may ask again.
//! To remove the leader itself, it first hands leadership over (`POST /transfer?to=ID`, to the strongest other
//! voter among the given addresses that answers and follows it, so that a member that is down is not chosen; to
//! the strongest other voter when none of them does), waits for another member to lead, and asks that one. An
//! address that cannot be reached or does not answer as a member does exits with status 2.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use elect_net::HttpToken;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::header::{AUTHORIZATION, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

use crate::outcome::{BadInput, Outcome, Refused};

/// The longest one exchange with a member may take: a change waits up to 30 s on the member, then answers 202.
const EXCHANGE: Duration = Duration::from_secs(40);

/// How long a leader to be removed may take to hand leadership over.
const HANDOVER: Duration = Duration::from_secs(10);

/// The longest answer read from a member.
const MAX_ANSWER: usize = 1 << 20;

#[derive(Args)]
pub(crate) struct VotersArgs {
    /// A member's HTTP address (its --http), `IP:PORT` or `HOST:PORT`, e.g. 127.0.0.1:9101; repeat for several
    /// members: a change goes to the one that leads.
    #[arg(long = "http", value_name = "ADDR", required = true, value_parser = host_port)]
    http: Vec<String>,
    /// Make member ID a voter (a learner that runs, listed among every member's peers).
    #[arg(long, value_name = "ID", conflicts_with = "remove")]
    add: Option<u32>,
    /// Make member ID a voter no more: it follows, and takes no part in elections. If ID leads, leadership is
    /// handed over first, to the strongest other voter among the addresses given that answers and follows it (the
    /// strongest other voter when none does: give every member's address).
    #[arg(long, value_name = "ID")]
    remove: Option<u32>,
    /// The members' HTTP token (their --http-token-file), for a change.
    #[arg(long, value_name = "FILE")]
    http_token_file: Option<PathBuf>,
    /// Print the member's JSON document instead of a line of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &VotersArgs) -> anyhow::Result<Outcome> {
    let token = match &args.http_token_file {
        Some(path) => Some(HttpToken::read(path).map_err(|e| BadInput(e.to_string()))?.1),
        None => None,
    };
    let change = match (args.add, args.remove) {
        (Some(id), _) => Some(format!("add={id}")),
        (_, Some(id)) => Some(format!("remove={id}")),
        _ => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("async runtime")?;
    runtime.block_on(async {
        let Some(change) = change else {
            let (status, doc) = exchange(&args.http[0], Method::GET, "/voters", None).await?;
            ensure_ok(&args.http[0], status, &doc)?;
            print(&doc, args.json);
            return Ok(Outcome::Held);
        };
        let mut leader = find_leader(&args.http).await?;
        // Asking for what already holds succeeds, so that a script may ask again (a pod that adds itself at start).
        let (status, now) = exchange(&leader, Method::GET, "/voters", None).await?;
        ensure_ok(&leader, status, &now)?;
        let votes = |id: u32| now["voters"].as_array().is_some_and(|v| v.iter().any(|v| *v == id));
        let done = match (args.add, args.remove) {
            (Some(id), _) if votes(id) => Some(format!("member {id} is a voter already")),
            (_, Some(id)) if !votes(id) => Some(format!("member {id} is not a voter")),
            _ => None,
        };
        if let Some(done) = done {
            print(&now, args.json);
            eprintln!("{done}: nothing to change");
            return Ok(Outcome::Held);
        }
        if let Some(id) = args.remove {
            leader = hand_over_if_leading(&args.http, leader, id, token.as_deref()).await?;
        }
        let leader = leader.as_str();
        let (status, doc) = exchange(leader, Method::POST, &format!("/voters?{change}"), token.as_deref()).await?;
        print(&doc, args.json);
        match status {
            200 => Ok(Outcome::Held),
            202 => Err(Refused(format!("{leader}: the change is still running; read the voters again")).into()),
            409 | 503 => {
                let reason = doc["outcome"]["reason"].as_str().unwrap_or("no reason given");
                let state = doc["outcome"]["state"].as_str().unwrap_or("refused");
                Err(Refused(format!("{leader}: {state}: {reason}")).into())
            }
            _ => Err(Refused(format!("{leader}: answered {status}: {}", doc["error"].as_str().unwrap_or("?"))).into()),
        }
    })
}

/// `HOST:PORT`, as a flag gives it.
fn host_port(s: &str) -> Result<String, String> {
    match s.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => Ok(s.to_owned()),
        _ => Err(format!("{s:?}: expected HOST:PORT, e.g. 127.0.0.1:9101")),
    }
}

/// The member among `addrs` that says it leads, waiting up to [`HANDOVER`] while none does (an election is on);
/// with one address, that one (it says so itself if it does not).
async fn find_leader(addrs: &[String]) -> anyhow::Result<String> {
    if let [only] = addrs {
        return Ok(only.clone());
    }
    let deadline = tokio::time::Instant::now() + HANDOVER;
    loop {
        match leader_among(addrs).await? {
            Ok(leader) => return Ok(leader),
            Err(seen) if tokio::time::Instant::now() >= deadline => {
                return Err(Refused(format!("none of these members leads ({seen}): name the leader's address")).into());
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The member among `addrs` that says it leads, or what each says instead.
async fn leader_among(addrs: &[String]) -> Result<Result<String, String>, BadInput> {
    let mut seen = Vec::new();
    for addr in addrs {
        // A member that does not answer (down, or not started yet) may be one of several given.
        let (status, doc) = match exchange(addr, Method::GET, "/status", None).await {
            Ok(answer) => answer,
            Err(e) if addrs.len() > 1 => {
                seen.push(e.to_string());
                continue;
            }
            Err(e) => return Err(e),
        };
        ensure_ok(addr, status, &doc)?;
        if doc["is_leader"] == Value::Bool(true) {
            return Ok(Ok(addr.clone()));
        }
        seen.push(format!("{addr} follows {}", doc["leader"]));
    }
    Ok(Err(seen.join(", ")))
}

/// The leader to ask to remove member `id`: `leader`, unless `id` is the member at `leader`; then it hands
/// leadership over to the strongest other voter, and the member among `addrs` that leads next is asked.
async fn hand_over_if_leading(
    addrs: &[String],
    leader: String,
    id: u32,
    token: Option<&str>,
) -> anyhow::Result<String> {
    let (status, doc) = exchange(&leader, Method::GET, "/voters", None).await?;
    ensure_ok(&leader, status, &doc)?;
    if doc["id"] != id {
        return Ok(leader);
    }
    let voters: Vec<u64> = doc["voters"].as_array().into_iter().flatten().filter_map(Value::as_u64).collect();
    let others: Vec<u64> = voters.iter().copied().filter(|&v| v != u64::from(id)).collect();
    // The strongest of the other voters that answers among the addresses given and follows this leader: one
    // that is down or cut off could not take over. Without such a one (one address given), the strongest other
    // voter.
    let following = following(addrs, id).await;
    let Some(to) = others.iter().copied().filter(|v| following.contains(v)).max().or(others.iter().copied().max())
    else {
        return Err(Refused(format!("{leader}: member {id} is the only voter")).into());
    };
    let (status, answer) = exchange(&leader, Method::POST, &format!("/transfer?to={to}"), token).await?;
    if status != 202 {
        let why = answer["error"].as_str().unwrap_or("?").to_owned();
        return Err(Refused(format!("{leader}: could not hand leadership over to {to}: {status} {why}")).into());
    }
    eprintln!("member {id} leads: handed leadership over to member {to} first");
    let deadline = tokio::time::Instant::now() + HANDOVER;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        for addr in addrs {
            if let Ok((200, doc)) = exchange(addr, Method::GET, "/status", None).await
                && doc["is_leader"] == true
                && doc["id"] != id
            {
                return Ok(addr.clone());
            }
        }
    }
    Err(Refused(format!(
        "member {id} handed leadership over, but none of the addresses given shows another leader within \
         {HANDOVER:?}: give the new leader's address (--http)"
    ))
    .into())
}

/// How long a member asked whether it follows the leader may take to answer: one that is paused or cut off would
/// not take over anyway.
const PROBE: Duration = Duration::from_secs(1);

/// The ids of the members among `addrs` that answer within [`PROBE`] and say they follow member `leader`.
async fn following(addrs: &[String], leader: u32) -> Vec<u64> {
    let mut ids = Vec::new();
    for addr in addrs {
        if let Ok(Ok((200, doc))) = tokio::time::timeout(PROBE, exchange(addr, Method::GET, "/status", None)).await
            && doc["leader"] == leader
            && let Some(id) = doc["id"].as_u64()
            && id != u64::from(leader)
        {
            ids.push(id);
        }
    }
    ids
}

fn ensure_ok(addr: &str, status: u16, doc: &Value) -> Result<(), BadInput> {
    if status == 200 {
        return Ok(());
    }
    Err(BadInput(format!("{addr}: answered {status}: {}", doc["error"].as_str().unwrap_or("not a member's endpoint"))))
}

/// The configuration in one line, or the whole document.
fn print(doc: &Value, json: bool) {
    if json {
        println!("{doc}");
        return;
    }
    let list = |key: &str| match doc[key].as_array() {
        Some(ids) if !ids.is_empty() => ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        _ => "none".to_owned(),
    };
    let mut line = format!(
        "configuration {}: voters {}; learners {}",
        doc["config"].as_str().unwrap_or("?"),
        list("voters"),
        list("learners")
    );
    if let Some(changing) = doc["changing"].as_str() {
        line.push_str(&format!("; changing: {changing}"));
    }
    if let (Some(change), Some(state)) = (doc["change"].as_str(), doc["outcome"]["state"].as_str()) {
        line.push_str(&format!("; {change}: {state}"));
        if let Some(reason) = doc["outcome"]["reason"].as_str() {
            line.push_str(&format!(" ({reason})"));
        }
    }
    println!("{line}");
}

/// One HTTP/1.1 exchange with the member at `addr`: its status and its answer (JSON, or `{"error": TEXT}`).
async fn exchange(addr: &str, method: Method, path: &str, token: Option<&str>) -> Result<(u16, Value), BadInput> {
    let fail = |what: &str, e: &dyn std::fmt::Display| BadInput(format!("{addr}: {what}: {e}"));
    let talk = async {
        let stream = TcpStream::connect(addr).await.map_err(|e| fail("cannot connect", &e))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| fail("HTTP", &e))?;
        tokio::spawn(connection);
        let mut request = Request::builder().method(method).uri(path).header(HOST, addr);
        if let Some(token) = token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request.body(Empty::<Bytes>::new()).map_err(|e| fail("request", &e))?;
        let response = sender.send_request(request).await.map_err(|e| fail("HTTP", &e))?;
        let status = response.status().as_u16();
        let body = http_body_util::Limited::new(response.into_body(), MAX_ANSWER);
        let bytes = body.collect().await.map_err(|e| fail("reading the answer", &e))?.to_bytes();
        let text = String::from_utf8_lossy(&bytes);
        let doc = serde_json::from_str(&text).unwrap_or_else(|_| serde_json::json!({ "error": text.trim() }));
        Ok((status, doc))
    };
    tokio::time::timeout(EXCHANGE, talk).await.map_err(|_| fail("no answer", &format!("{EXCHANGE:?}")))?
}
