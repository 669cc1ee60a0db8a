//! A client for the voters of a running cluster, through its members' HTTP endpoints (`elect node --http`): read
//! them (`GET /voters`), and add or remove one at the leader (`POST /voters?add=ID` or `?remove=ID`), which the
//! client finds among the addresses it is given (`GET /status`).
//!
//! Asking for what already holds (adding a voter, removing a learner) changes nothing and succeeds, so that a
//! script may ask again. To remove the leader itself, the client first hands leadership over (`POST
//! /transfer?to=ID`, to the strongest other voter among the given addresses that answers and follows it, so that a
//! member that is down is not chosen; to the strongest other voter when none of them does), waits for another
//! member to lead, and asks that one. `elect voters` is this client with flags and a printout.

use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::header::{AUTHORIZATION, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

/// The longest one exchange with a member may take: a change waits up to 30 s on the member, then answers 202.
const EXCHANGE: Duration = Duration::from_secs(40);

/// How long a leader to be removed may take to hand leadership over.
const HANDOVER: Duration = Duration::from_secs(10);

/// How long a member asked whether it follows the leader may take to answer: one that is paused or cut off would
/// not take over anyway.
const PROBE: Duration = Duration::from_secs(1);

/// The longest answer read from a member.
const MAX_ANSWER: usize = 1 << 20;

/// Why a request could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum VotersError {
    /// An address that cannot be reached, or that does not answer as a member does.
    #[error("{0}")]
    Unreachable(String),
    /// The members answered, and the change cannot be made: no leader among them, the only voter, a handover
    /// that did not happen.
    #[error("{0}")]
    Refused(String),
}

/// A change of the voters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Make member ID a voter (a learner that runs, listed among every member's peers).
    Add(u32),
    /// Make member ID a voter no more: it follows, and takes no part in elections.
    Remove(u32),
}

/// How a change ended, with the leader's document (`GET /voters`'s shape, and the change's `outcome`).
#[derive(Debug)]
pub struct Changed {
    /// The leader's last answer.
    pub doc: Value,
    /// How it ended.
    pub outcome: Outcome,
    /// The member the leader handed leadership over to before it could be removed, if it was.
    pub handed_over_to: Option<u64>,
}

/// How a change ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done.
    Done,
    /// Nothing to change, and why: the member is a voter already, or is not one.
    AlreadySo(String),
    /// The leader is still at it (it answered 202): it may or may not take effect.
    StillRunning(String),
    /// The leader refused it, or answered otherwise: the reason, naming the leader.
    Refused(String),
}

/// The voters as the member at `addr` sees them (its `GET /voters` document).
pub async fn read(addr: &str) -> Result<Value, VotersError> {
    let (status, doc) = exchange(addr, Method::GET, "/voters", None).await?;
    ensure_ok(addr, status, &doc)?;
    if !is_configuration(&doc) {
        return Err(VotersError::Unreachable(format!(
            "{addr}: answered 200, but not with a member's configuration (its name, voters and learners)"
        )));
    }
    Ok(doc)
}

/// Whether `doc` reads as a member's `/voters` answer: a configuration's name, and its voters and learners by id.
fn is_configuration(doc: &Value) -> bool {
    let ids = |key: &str| {
        doc[key].as_array().is_some_and(|ids| ids.iter().all(|id| id.as_u64().is_some_and(|id| id <= u32::MAX.into())))
    };
    doc["config"].is_string() && ids("voters") && ids("learners")
}

/// Makes `change` at the member among `addrs` that leads (the one address, if one is given), with the members'
/// HTTP `token`.
pub async fn change(addrs: &[String], change: Change, token: Option<&str>) -> Result<Changed, VotersError> {
    let mut leader = find_leader(addrs).await?;
    let now = read(&leader).await?;
    let votes = |id: u32| now["voters"].as_array().is_some_and(|v| v.iter().any(|v| *v == id));
    let (query, already) = match change {
        Change::Add(id) => (format!("add={id}"), votes(id).then(|| format!("member {id} is a voter already"))),
        Change::Remove(id) => (format!("remove={id}"), (!votes(id)).then(|| format!("member {id} is not a voter"))),
    };
    if let Some(already) = already {
        return Ok(Changed { doc: now, outcome: Outcome::AlreadySo(already), handed_over_to: None });
    }
    let mut handed_over_to = None;
    if let Change::Remove(id) = change {
        (leader, handed_over_to) = hand_over_if_leading(addrs, leader, id, token).await?;
    }
    let (status, doc) = exchange(&leader, Method::POST, &format!("/voters?{query}"), token).await?;
    let outcome = match status {
        200 => Outcome::Done,
        202 => Outcome::StillRunning(format!("{leader}: the change is still running; read the voters again")),
        409 | 503 => {
            let reason = doc["outcome"]["reason"].as_str().unwrap_or("no reason given");
            let state = doc["outcome"]["state"].as_str().unwrap_or("refused");
            Outcome::Refused(format!("{leader}: {state}: {reason}"))
        }
        _ => Outcome::Refused(format!("{leader}: answered {status}: {}", doc["error"].as_str().unwrap_or("?"))),
    };
    Ok(Changed { doc, outcome, handed_over_to })
}

/// The member among `addrs` that says it leads, waiting up to [`HANDOVER`] while none does (an election is on);
/// with one address, that one (it says so itself if it does not).
async fn find_leader(addrs: &[String]) -> Result<String, VotersError> {
    if let [only] = addrs {
        return Ok(only.clone());
    }
    let deadline = tokio::time::Instant::now() + HANDOVER;
    loop {
        match leader_among(addrs).await? {
            Ok(leader) => return Ok(leader),
            Err(seen) if tokio::time::Instant::now() >= deadline => {
                return Err(VotersError::Refused(format!(
                    "none of these members leads ({seen}): name the leader's address"
                )));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The member among `addrs` that says it leads, or what each says instead.
async fn leader_among(addrs: &[String]) -> Result<Result<String, String>, VotersError> {
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
) -> Result<(String, Option<u64>), VotersError> {
    let doc = read(&leader).await?;
    if doc["id"] != id {
        return Ok((leader, None));
    }
    let voters: Vec<u64> = doc["voters"].as_array().into_iter().flatten().filter_map(Value::as_u64).collect();
    let others: Vec<u64> = voters.iter().copied().filter(|&v| v != u64::from(id)).collect();
    // The strongest of the other voters that answers among the addresses given and follows this leader: one
    // that is down or cut off could not take over. Without such a one (one address given), the strongest other
    // voter.
    let following = following(addrs, id).await;
    let Some(to) = others.iter().copied().filter(|v| following.contains(v)).max().or(others.iter().copied().max())
    else {
        return Err(VotersError::Refused(format!("{leader}: member {id} is the only voter")));
    };
    let (status, answer) = exchange(&leader, Method::POST, &format!("/transfer?to={to}"), token).await?;
    if status != 202 {
        let why = answer["error"].as_str().unwrap_or("?").to_owned();
        return Err(VotersError::Refused(format!("{leader}: could not hand leadership over to {to}: {status} {why}")));
    }
    let deadline = tokio::time::Instant::now() + HANDOVER;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        for addr in addrs {
            if let Ok((200, doc)) = exchange(addr, Method::GET, "/status", None).await
                && doc["is_leader"] == true
                && doc["id"] != id
            {
                return Ok((addr.clone(), Some(to)));
            }
        }
    }
    Err(VotersError::Refused(format!(
        "member {id} handed leadership over, but none of the addresses given shows another leader within \
         {HANDOVER:?}: give the new leader's address (--http)"
    )))
}

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

fn ensure_ok(addr: &str, status: u16, doc: &Value) -> Result<(), VotersError> {
    if status == 200 {
        return Ok(());
    }
    Err(VotersError::Unreachable(format!(
        "{addr}: answered {status}: {}",
        doc["error"].as_str().unwrap_or("not a member's endpoint")
    )))
}

/// One HTTP/1.1 exchange with the member at `addr`: its status and its answer (JSON, or `{"error": TEXT}`).
async fn exchange(addr: &str, method: Method, path: &str, token: Option<&str>) -> Result<(u16, Value), VotersError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| VotersError::Unreachable(format!("{addr}: {what}: {e}"));
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn only_a_members_configuration_is_taken_for_one() {
        let member = json!({ "id": 1, "config": "1.0#0", "voters": [1, 2, 3], "learners": [4], "changing": null });
        assert!(super::is_configuration(&member));
        for other in [
            json!({}),
            json!({ "status": "ok" }),
            json!({ "config": 3, "voters": [1], "learners": [] }),
            json!({ "config": "1.0#0", "voters": ["1"], "learners": [] }),
            json!({ "config": "1.0#0", "voters": [1], "learners": [-4] }),
            json!({ "config": "1.0#0", "voters": [4294967296u64], "learners": [] }),
            json!([1, 2, 3]),
        ] {
            assert!(!super::is_configuration(&other), "{other}");
        }
    }
}
