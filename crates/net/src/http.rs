//! The HTTP endpoints of a member (`NodeConfig::http`): `GET /status`, `GET /metrics`, `GET /leader` (and its
//! watch, `GET /leader?after=V`), `POST /resign`, `POST /transfer?to=ID`, and `GET /voters` with its changes
//! `POST /voters?add=ID` and `POST /voters?remove=ID` ([`voters`]).
//!
//! The documents are described in the crate's docs. `GET /status?ready` is the same document with status 503
//! while the member shows no leader: a readiness probe (Kubernetes' `httpGet`) that holds a member back until it
//! follows, or is, a leader.
//!
//! Every `GET` reads what the member's task published ([`crate::status::Board`] and the counters): a request never
//! waits for the task (a watch waits for the next change, not for the task). `POST /resign` and `POST /transfer`
//! hand the task a request and answer at once. HTTP/1.1 only, and a client gets [`HEADER_TIMEOUT`] to send its request's head.
//!
//! **Who may change something.** With a token (`NodeConfig::http_token`), the `POST`s must carry it as
//! `Authorization: Bearer TOKEN` (401 otherwise); without one, it is taken only when the endpoint is bound to a
//! loopback address, where only this machine can reach it, and refused with 403 otherwise.
//!
//! Idle or slow clients cannot hold the endpoints back: every connection is served by a task of its own, the
//! listener always accepts, and with [`MAX_CONNECTIONS`] open the oldest is closed to make room for the newest. A
//! probe or a scraper, which opens a connection and asks at once, is answered whatever else is open (a flood of
//! new connections can only close older ones, never stop the listener).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::{AbortHandle, JoinSet};
use tracing::{debug, info};

use crate::runner::Request as ToTask;
use crate::status::{After, Change, KEPT_CHANGES};
use crate::wire::Drop;

mod respond;
mod shared;
mod voters;

use respond::{accepted, json_response, plain, text, with_type};
pub(crate) use shared::{Guard, Shared};

/// The most connections open at once; a new one beyond it closes the oldest.
pub(crate) const MAX_CONNECTIONS: usize = 256;

/// How long a client may take to send a request's head.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// The OpenMetrics text format's content type.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long a watch (`GET /leader?after=V`) waits for a change when it does not say (`wait=SECONDS`).
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// The longest a watch may ask to wait, in seconds.
pub(crate) const MAX_WAIT_SECS: u64 = 300;

/// Serves `listener` until the task is aborted (which aborts every connection with it).
pub(crate) async fn serve(listener: TcpListener, shared: Shared) {
    let limits = Limits { connections: MAX_CONNECTIONS, header_timeout: HEADER_TIMEOUT };
    serve_bounded(listener, limits, move |request| {
        let shared = shared.clone();
        async move { respond(&request, &shared).await }
    })
    .await;
}

/// How many connections an HTTP server keeps open, and how long a client may take to send a request's head.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most connections open at once; a new one beyond it closes the oldest.
    pub connections: usize,
    /// How long a client may take to send a request's head.
    pub header_timeout: Duration,
}

/// Serves HTTP/1.1 on `listener` with `handle` until the task is aborted (which aborts every connection with it):
/// the loop of the members' endpoints and of `elect serve`. Every connection is served by a task of its own, the
/// listener always accepts (a failed accept, out of file descriptors say, is retried a little later), and with
/// `limits.connections` open the oldest is closed to make room for the newest, so idle or slow clients cannot hold
/// the server back.
pub async fn serve_bounded<H, F>(listener: TcpListener, limits: Limits, handle: H)
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let mut connections = JoinSet::new();
    // The open connections, oldest first.
    let mut open: VecDeque<AbortHandle> = VecDeque::new();
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                debug!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        while connections.try_join_next().is_some() {}
        open.retain(|c| !c.is_finished());
        while open.len() >= limits.connections.max(1) {
            if let Some(oldest) = open.pop_front() {
                debug!("too many HTTP connections: the oldest is closed");
                oldest.abort();
            }
        }
        let handle = handle.clone();
        let connection = connections.spawn(async move {
            let service = service_fn(move |request| {
                let response = handle(request);
                async move { Ok::<_, Infallible>(response.await) }
            });
            let served = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                debug!(%peer, error = %e, "HTTP connection ended with an error");
            }
        });
        open.push_back(connection);
    }
}

/// The paths served, and the method each takes.
const ROUTES: [(&str, Method); 7] = [
    ("/status", Method::GET),
    ("/metrics", Method::GET),
    ("/leader", Method::GET),
    ("/resign", Method::POST),
    ("/transfer", Method::POST),
    ("/voters", Method::GET),
    ("/voters", Method::POST),
];

/// The response to one request.
async fn respond(request: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    let path = request.uri().path();
    if !ROUTES.iter().any(|(p, _)| *p == path) {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: the paths are /status, /metrics, /leader, /resign, /transfer and /voters\n",
        );
    }
    let Some((_, method)) = ROUTES.iter().find(|(p, m)| *p == path && m == request.method()) else {
        let allowed: Vec<&str> = ROUTES.iter().filter(|(p, _)| *p == path).map(|(_, m)| m.as_str()).collect();
        let (text, allow) = match allowed.as_slice() {
            ["GET"] => ("method not allowed: use GET\n", "GET"),
            ["POST"] => ("method not allowed: use POST\n", "POST"),
            _ => ("method not allowed: use GET or POST\n", "GET, POST"),
        };
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, text);
        response.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
        return response;
    };
    match path {
        "/status" => status(request, shared),
        "/metrics" => with_type(Response::new(Full::new(Bytes::from(shared.counters.encode()))), OPENMETRICS),
        "/leader" => leader(request, shared).await,
        "/transfer" => transfer(request, shared),
        "/voters" if *method == Method::GET => voters::voters(shared),
        "/voters" => voters::change(request, shared).await,
        _ => resign(request, shared),
    }
}

fn status(request: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    let mut status = shared.board.to_json();
    let stats = shared.counters.snapshot();
    let dropped: serde_json::Map<String, serde_json::Value> =
        Drop::ALL.iter().map(|&r| (r.name().to_owned(), stats.dropped(r).into())).collect();
    status["dropped"] = dropped.into();
    let invalid: serde_json::Map<String, serde_json::Value> =
        stats.invalid_by_kind.iter().map(|&(kind, n)| (kind.to_owned(), n.into())).collect();
    status["invalid"] = invalid.into();
    let unready = request.uri().query() == Some("ready") && status["leader"].is_null();
    let mut response = json_response(&status);
    if unready {
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    }
    response
}

/// `GET /leader`: the latest change of the leadership; with `?after=V`, the change after number `V`, waiting for
/// it for up to `wait=SECONDS` (30 by default, at most 300), and the latest one again if none came.
async fn leader(request: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    let (after, wait) = match watch_query(request.uri().query()) {
        Ok(asked) => asked,
        Err(problem) => return text(StatusCode::BAD_REQUEST, format!("bad request: {problem}\n")),
    };
    let Some(after) = after else { return json_response(&change_json(shared, shared.board.leader())) };
    match shared.board.wait_after(after, wait).await {
        After::Next(change) => json_response(&change_json(shared, change)),
        // No change came in time, or the number came from another incarnation of the member: the latest.
        After::Latest | After::Unknown => json_response(&change_json(shared, shared.board.leader())),
        After::Forgotten(oldest) => text(
            StatusCode::GONE,
            format!(
                "gone: change {} is no longer kept (a member keeps its last {KEPT_CHANGES}, the oldest now {oldest}); \
                 read GET /leader afresh and watch from its version\n",
                after + 1
            ),
        ),
    }
}

/// A watch's `after` and `wait` from the query string.
fn watch_query(query: Option<&str>) -> Result<(Option<u64>, Duration), String> {
    let (mut after, mut wait) = (None, DEFAULT_WAIT);
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = || value.parse::<u64>().map_err(|_| format!("{key}={value:?}: not a whole number"));
        match key {
            "after" => after = Some(number()?),
            "wait" => {
                let secs = number()?;
                if secs > MAX_WAIT_SECS {
                    return Err(format!("wait={secs}: at most {MAX_WAIT_SECS} seconds"));
                }
                wait = Duration::from_secs(secs);
            }
            _ => return Err(format!("{key:?}: the parameters of /leader are after=VERSION and wait=SECONDS")),
        }
    }
    Ok((after, wait))
}

/// The JSON document of one leadership change. In the lease mode, the latest change also says how long the
/// member's lease has left, and a member whose lease ran out does not lead.
fn change_json(shared: &Shared, change: Change) -> serde_json::Value {
    let (id, incarnation) = shared.board.who();
    let latest = change.version == change.latest;
    let mut doc = json!({
        "id": id.0,
        "incarnation": incarnation,
        "version": change.version,
        "latest": change.latest,
        "leader": change.shown.leader.map(|l| l.0),
        "epoch": change.shown.epoch,
        "epoch_round": change.shown.epoch.round(),
        "is_leader": if latest { shared.board.leads(change.shown) } else { change.shown.leader == Some(id) },
    });
    if let (true, Some(left)) = (latest, shared.board.lease_left()) {
        doc["lease_ms_left"] = json!(left.as_secs_f64() * 1000.0);
    }
    doc
}

/// `POST /resign`: a leader steps down and sits out for its resign hold.
fn resign(request: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    if let Some(refused) = shared.guard.refuses(request) {
        return refused;
    }
    let epoch = match leading(shared) {
        Ok(epoch) => epoch,
        Err(conflict) => return text(StatusCode::CONFLICT, conflict),
    };
    if shared.requests.send(ToTask::Resign).is_err() {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "unavailable: the member has stopped\n");
    }
    info!("asked over HTTP to resign");
    accepted(&json!({ "resigning": true, "epoch": epoch, "sits_out_ms": millis(shared.resign_hold) }))
}

/// `POST /transfer?to=ID`: a leader hands leadership over to member `ID`, which has until the resign hold is
/// over to take over (an ordinary election follows if it does not).
fn transfer(request: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    if let Some(refused) = shared.guard.refuses(request) {
        return refused;
    }
    let (id, _) = shared.board.who();
    let to = match transfer_query(request.uri().query(), id, &shared.members) {
        Ok(to) => to,
        Err(problem) => return text(StatusCode::BAD_REQUEST, format!("bad request: {problem}\n")),
    };
    let epoch = match leading(shared) {
        Ok(epoch) => epoch,
        Err(conflict) => return text(StatusCode::CONFLICT, conflict),
    };
    if shared.requests.send(ToTask::Transfer(to)).is_err() {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "unavailable: the member has stopped\n");
    }
    info!(to = to.0, "asked over HTTP to hand leadership over");
    accepted(&json!({ "transferring": true, "to": to.0, "epoch": epoch, "deadline_ms": millis(shared.resign_hold) }))
}

/// The member `POST /transfer` names: `to=ID`, a member other than this one (`me`).
fn transfer_query(
    query: Option<&str>,
    me: elect_core::NodeId,
    members: &[elect_core::NodeId],
) -> Result<elect_core::NodeId, String> {
    let mut to = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("to", value)) => {
                let id = value.parse::<u32>().map_err(|_| format!("to={value:?}: not a member id"))?;
                to = Some(elect_core::NodeId(id));
            }
            _ => return Err(format!("{pair:?}: the one parameter of /transfer is to=ID")),
        }
    }
    let to = to.ok_or("name the member to hand leadership to: /transfer?to=ID")?;
    if to == me {
        return Err(format!("to={to}: this member already leads; name another member"));
    }
    if !members.contains(&to) {
        let ids: Vec<String> = members.iter().filter(|&&m| m != me).map(ToString::to_string).collect();
        return Err(format!("to={to}: no such member (the others are {})", ids.join(", ")));
    }
    Ok(to)
}

/// The epoch under which this member leads, or the body of the `409 Conflict` saying it does not.
fn leading(shared: &Shared) -> Result<elect_core::Epoch, String> {
    let (id, _) = shared.board.who();
    let shown = shared.board.leader().shown;
    if shown.leader == Some(id) {
        return Ok(shown.epoch);
    }
    let leader = shown.leader.map_or_else(|| "none yet".to_owned(), |l| l.to_string());
    Err(format!("conflict: this member does not lead (the leader: {leader})\n"))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
