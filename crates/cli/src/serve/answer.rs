//! What a request may ask for ([`Caps`]), what it gets ([`Answer`]), and the flag that cancels the work of a
//! request whose time ran out.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hyper::StatusCode;

/// What one request may ask for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Caps {
    /// Whether requests may name files.
    pub(crate) allow_files: bool,
    /// Processes of a simulation.
    pub(crate) sim_nodes: usize,
    /// Processes of a check or an explorer session.
    pub(crate) check_nodes: usize,
    /// Events of a simulation.
    pub(crate) events: u64,
    /// States of a check, or of an explorer's search.
    pub(crate) states: usize,
    /// The checker's resident memory, in bytes.
    pub(crate) memory: u64,
    /// Seconds of computing.
    pub(crate) seconds: f64,
    /// Runs of a sweep.
    pub(crate) runs: u64,
}

impl Caps {
    /// The defaults: each keeps one request under a few seconds on a small machine.
    pub(crate) const DEFAULT: Self = Self {
        allow_files: false,
        sim_nodes: 1000,
        check_nodes: 7,
        events: 2_000_000,
        states: 200_000,
        memory: 1 << 30,
        seconds: 10.0,
        runs: 200,
    };

    /// The time limit.
    pub(crate) fn time(&self) -> Duration {
        Duration::from_secs_f64(self.seconds)
    }
}

/// An answer: a status, a content type and a body, and headers of its own.
pub(crate) struct Answer {
    pub(super) status: StatusCode,
    pub(super) content_type: &'static str,
    pub(super) body: Vec<u8>,
    pub(super) headers: Vec<(&'static str, String)>,
}

impl Answer {
    /// 200 with a JSON body.
    pub(crate) fn json(body: String) -> Self {
        Self { status: StatusCode::OK, content_type: "application/json", body: body.into_bytes(), headers: Vec::new() }
    }

    /// 200 with `value` as JSON.
    pub(crate) fn value(value: &impl serde::Serialize) -> Self {
        Self::json(serde_json::to_string(value).unwrap_or_default())
    }

    /// An error: `status`, and the message on one line.
    pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Self {
        let mut body = message.into();
        body.push('\n');
        Self { status, content_type: "text/plain; charset=utf-8", body: body.into_bytes(), headers: Vec::new() }
    }

    /// 400: bad input, or over a limit.
    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self::error(StatusCode::BAD_REQUEST, message)
    }

    /// Adds a header.
    pub(crate) fn with(mut self, name: &'static str, value: String) -> Self {
        self.headers.push((name, value));
        self
    }
}

thread_local! {
    /// The request computing on this thread: set when its answer went out without it (it passed the time limit).
    pub(super) static CANCEL: std::cell::RefCell<Option<Arc<AtomicBool>>> = const { std::cell::RefCell::new(None) };
}

/// The cancellation flag of the request computing on this thread, if any: the checker stops when it is set
/// (`CheckConfig::cancel`), and so does a simulation (its progress callback looks at it).
pub(crate) fn cancel_flag() -> Option<Arc<AtomicBool>> {
    CANCEL.with(|c| c.borrow().clone())
}
