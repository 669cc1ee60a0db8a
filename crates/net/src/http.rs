//! The HTTP endpoints of a member (`NodeConfig::http`): `GET /status` and `GET /metrics`.
//!
//! The documents are described in the crate's docs. `GET /status?ready` is the same document with status 503
//! while the member shows no leader: a readiness probe (Kubernetes' `httpGet`) that holds a member back until it
//! follows, or is, a leader.
//!
//! Both read what the member's task published ([`crate::status::Board`] and the counters): a request never waits
//! for the task. HTTP/1.1 only, and a client gets [`HEADER_TIMEOUT`] to send its request's head.
//!
//! Idle or slow clients cannot hold the endpoints back: every connection is served by a task of its own, the
//! listener always accepts, and with [`MAX_CONNECTIONS`] open the oldest is closed to make room for the newest. A
//! probe or a scraper, which opens a connection and asks at once, is answered whatever else is open (a flood of
//! new connections can only close older ones, never stop the listener).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::task::{AbortHandle, JoinSet};
use tracing::debug;

use crate::stats::Counters;
use crate::status::Board;
use crate::wire::Drop;

/// The most connections open at once; a new one beyond it closes the oldest.
pub(crate) const MAX_CONNECTIONS: usize = 256;

/// How long a client may take to send a request's head.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// The OpenMetrics text format's content type.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What the endpoints read.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    pub(crate) board: Arc<Board>,
    pub(crate) counters: Arc<Counters>,
}

/// Serves `listener` until the task is aborted (which aborts every connection with it).
pub(crate) async fn serve(listener: TcpListener, shared: Shared) {
    let limits = Limits { connections: MAX_CONNECTIONS, header_timeout: HEADER_TIMEOUT };
    serve_bounded(listener, limits, move |request| {
        let response = respond(&request, &shared);
        async move { response }
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

/// The response to one request.
fn respond(request: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    let path = request.uri().path();
    if path != "/status" && path != "/metrics" {
        return plain(StatusCode::NOT_FOUND, "not found: the paths are /status and /metrics\n");
    }
    if request.method() != Method::GET {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed: use GET\n");
        response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET"));
        return response;
    }
    if path == "/status" {
        let mut status = shared.board.to_json();
        let stats = shared.counters.snapshot();
        let dropped: serde_json::Map<String, serde_json::Value> =
            Drop::ALL.iter().map(|&r| (r.name().to_owned(), stats.dropped(r).into())).collect();
        status["dropped"] = dropped.into();
        let invalid: serde_json::Map<String, serde_json::Value> =
            stats.invalid_by_kind.iter().map(|&(kind, n)| (kind.to_owned(), n.into())).collect();
        status["invalid"] = invalid.into();
        let unready = request.uri().query() == Some("ready") && status["leader"].is_null();
        let mut body = status.to_string();
        body.push('\n');
        let mut response = with_type(Response::new(Full::new(Bytes::from(body))), "application/json");
        if unready {
            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        }
        response
    } else {
        with_type(Response::new(Full::new(Bytes::from(shared.counters.encode()))), OPENMETRICS)
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = with_type(Response::new(Full::new(Bytes::from_static(text.as_bytes()))), "text/plain");
    *response.status_mut() = status;
    response
}

fn with_type(mut response: Response<Full<Bytes>>, content_type: &'static str) -> Response<Full<Bytes>> {
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
