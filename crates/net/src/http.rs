//! The HTTP endpoints of a member (`NodeConfig::http`): `GET /status` and `GET /metrics`.
//!
//! The documents are described in the crate's docs.
//!
//! Both read what the member's task published ([`crate::status::Board`] and the counters): a request never waits
//! for the task. HTTP/1.1 only, at most [`MAX_CONNECTIONS`] connections at once, and a client gets
//! [`HEADER_TIMEOUT`] to send its request's head.

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
use tokio::task::JoinSet;
use tracing::debug;

use crate::stats::Counters;
use crate::status::Board;

/// The most connections served at once; more wait in the listener's backlog.
pub(crate) const MAX_CONNECTIONS: usize = 64;

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
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        if connections.len() >= MAX_CONNECTIONS {
            let _ = connections.join_next().await;
            continue;
        }
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, or a connection reset before it was accepted: wait a little, go on.
                debug!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let shared = shared.clone();
        connections.spawn(async move {
            let service = service_fn(move |request| {
                let response = respond(&request, &shared);
                async move { Ok::<_, Infallible>(response) }
            });
            let served = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                debug!(%peer, error = %e, "HTTP connection ended with an error");
            }
        });
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
        let mut body = shared.board.to_json().to_string();
        body.push('\n');
        with_type(Response::new(Full::new(Bytes::from(body))), "application/json")
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
