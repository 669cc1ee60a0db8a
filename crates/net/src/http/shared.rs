//! What every endpoint reads and whom it lets change something: the member's board, its counters, the channel
//! to its task, and the guard of the requests that change something.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use tokio::sync::mpsc;

use super::respond::plain;
use crate::auth::HttpToken;
use crate::runner::Request as ToTask;
use crate::stats::Counters;
use crate::status::Board;

/// What the endpoints read, and where they send what they are asked to do.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    pub(crate) board: Arc<Board>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) requests: mpsc::UnboundedSender<ToTask>,
    pub(crate) guard: Arc<Guard>,
    /// How long a member that resigned sits out; a transfer's deadline.
    pub(crate) resign_hold: Duration,
    /// Every member's id, this one's included.
    pub(crate) members: Arc<[elect_core::NodeId]>,
}

/// Who may ask the member to change something.
#[derive(Debug)]
pub(crate) enum Guard {
    /// Whoever presents the token.
    Token(HttpToken),
    /// Anyone: the endpoint is bound to loopback.
    Loopback,
    /// No one: the endpoint is reachable from other machines and there is no token.
    Refuse,
}

impl Guard {
    /// The guard of an endpoint bound to `addr`, with `token` if one was given.
    pub(crate) fn new(addr: std::net::SocketAddr, token: Option<HttpToken>) -> Self {
        match token {
            Some(token) => Self::Token(token),
            None if addr.ip().is_loopback() => Self::Loopback,
            None => Self::Refuse,
        }
    }

    /// `None` if `request` may change something, or the response refusing it.
    pub(super) fn refuses(&self, request: &Request<Incoming>) -> Option<Response<Full<Bytes>>> {
        match self {
            Self::Loopback => None,
            Self::Refuse => Some(plain(
                StatusCode::FORBIDDEN,
                "refused: this endpoint is reachable from other machines and the member has no token; start it \
                 with --http-token-file FILE (requests then carry `Authorization: Bearer TOKEN`), or bind --http \
                 to a loopback address\n",
            )),
            Self::Token(token) => {
                let presented = request
                    .headers()
                    .get(AUTHORIZATION)
                    .map(HeaderValue::as_bytes)
                    // The scheme's name is case-insensitive (RFC 9110).
                    .filter(|v| v.len() > 7 && v[..7].eq_ignore_ascii_case(b"bearer "))
                    .filter(|v| token.accepts(&v[7..]));
                if presented.is_some() {
                    return None;
                }
                let mut response = plain(
                    StatusCode::UNAUTHORIZED,
                    "refused: send the member's token (its --http-token-file) as `Authorization: Bearer TOKEN`\n",
                );
                response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                Some(response)
            }
        }
    }
}
