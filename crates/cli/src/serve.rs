//! `elect serve`: the toolkit behind one page, for a browser.
//!
//! The HTTP API is the command line's contract: `GET /api/sim?FLAGS` and `GET /api/check?FLAGS` take the flags of
//! `elect sim` and `elect check` as query parameters, parse them with the same clap definitions and run them through
//! the same code, in this process, so the body is the object `--json` prints; `GET /api/sweep?FLAGS` runs a small
//! sweep; `/api/explore` is the checker's model stepped by hand (`explore.rs`); `GET /api/presets` lists the runs
//! the page offers by name (the scenarios that ship with elect, which need no `--allow-files`, and the tour's). The page (`serve/page.html`, embedded)
//! is drawn from those answers; the book's chapters it refers to are served under `/book/` (`book.rs`).
//!
//! Safe to host for a class: every request runs under this server's limits (`Caps`, tighter than the command
//! line's, raised by the flags of `elect serve`); a request over one gets 400 naming it. At most `--max-requests`
//! run at once (503 with `Retry-After` beyond); the work runs on a blocking thread, with a time limit, and a panic
//! is caught there, so nothing a request does ends the process. No request reads or writes a file unless the server
//! was started with `--allow-files`. It binds 127.0.0.1 unless told otherwise, and says where it listens.

mod answer;
mod api;
mod book;
mod explore;
pub(crate) mod load;
mod query;

use std::io::Write;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;

use crate::limits;
use crate::outcome::Outcome;
use answer::CANCEL;
use answer::{Answer, Caps};

/// The page: its HTML, style and script in one file, embedded in the binary; it fetches nothing but this server's
/// API.
const PAGE: &str = include_str!("serve/page.html");
/// The page's Live view: a running cluster, faults added by a click.
const LIVE_JS: &str = include_str!("serve/live.js");

/// The most connections open at once; a new one beyond it closes the oldest.
const MAX_CONNECTIONS: usize = 512;

/// How long a client may take to send a request's head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest request body read (an explorer's configuration or step), in bytes.
const MAX_BODY: usize = 64 << 10;

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on. The default serves this machine only; 0.0.0.0:8080 serves the network (mind the
    /// limits below). Port 0 picks a free port; the address is printed on the first line of standard output.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Let requests read and write files: `file:` topologies, --scenario, and the output files of `elect sim`
    /// (--trace, --svg, --html, ...) and `elect check` (--save, --html), as this server's user. Off by default: a
    /// request that names a file gets 400.
    #[arg(long)]
    allow_files: bool,
    /// A program to offer beside the built-in algorithms (exec:PROGRAM; repeat for several): it is started now,
    /// and requests may name it. A request cannot start any other program.
    #[arg(long = "program", value_name = "exec:PROGRAM")]
    programs: Vec<String>,
    /// The most processes of a simulation (and of each run of a sweep).
    #[arg(long, value_name = "N", default_value_t = Caps::DEFAULT.sim_nodes)]
    max_nodes: usize,
    /// The most processes the model checker and the explorer take (their states grow exponentially with n).
    #[arg(long, value_name = "N", default_value_t = Caps::DEFAULT.check_nodes)]
    max_check_nodes: usize,
    /// The most events of a simulation (a run asked for more, or that would go on longer, gets 400).
    #[arg(long, value_name = "N", default_value_t = Caps::DEFAULT.events)]
    max_events: u64,
    /// The most states one check (or one search of the explorer) visits.
    #[arg(long, value_name = "N", default_value_t = Caps::DEFAULT.states)]
    max_states: usize,
    /// The checker stops when this process's resident memory passes this size (a size like 512M or 2G); the
    /// resident set counts every request running at once.
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_bytes, default_value = "1G")]
    max_memory: u64,
    /// The longest a request may compute, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = Caps::DEFAULT.seconds)]
    max_seconds: f64,
    /// The most runs of one sweep (Compare: algorithms × sizes × seeds).
    #[arg(long, value_name = "N", default_value_t = Caps::DEFAULT.runs)]
    max_runs: u64,
    /// The most requests computing at once; beyond it a request gets 503 with Retry-After [default: the number
    /// of cores].
    #[arg(long, value_name = "N")]
    max_requests: Option<usize>,
    /// The most explorer sessions kept; a new one beyond it ends the oldest.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_sessions: usize,
}

/// What every connection shares.
struct Server {
    caps: Caps,
    /// Requests computing now, and the most allowed.
    busy: AtomicUsize,
    max_busy: usize,
    sessions: explore::Sessions,
}

pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<Outcome> {
    limits::seconds("--max-seconds", args.max_seconds)?;
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let max_busy = args.max_requests.unwrap_or(cores);
    if max_busy == 0 || args.max_sessions == 0 {
        return Err(crate::outcome::BadInput("--max-requests and --max-sessions must be at least 1".into()).into());
    }
    let caps = Caps {
        allow_files: args.allow_files,
        sim_nodes: args.max_nodes,
        check_nodes: args.max_check_nodes,
        events: args.max_events,
        states: args.max_states,
        memory: args.max_memory,
        seconds: args.max_seconds,
        runs: args.max_runs,
    };
    for program in &args.programs {
        if !elect_algos::program::is_program(program) {
            return Err(
                crate::outcome::BadInput(format!("--program {program}: a program is named exec:PROGRAM")).into()
            );
        }
        elect_algos::lookup(program).map_err(|e| crate::outcome::BadInput(format!("--program: {e}")))?;
        crate::program::allow(program);
    }
    elect_algos::program::seal();
    api::quiet_aborts();
    let server = Arc::new(Server {
        caps,
        busy: AtomicUsize::new(0),
        max_busy,
        sessions: explore::Sessions::new(args.max_sessions),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(max_busy + 16)
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(async {
        let listener = TcpListener::bind(args.listen)
            .await
            .map_err(|e| crate::outcome::BadInput(format!("cannot listen on {}: {e}", args.listen)))?;
        let addr = listener.local_addr()?;
        let reach = if addr.ip().is_loopback() {
            "this machine only; --listen 0.0.0.0:PORT serves the network"
        } else {
            "every machine that can reach this address"
        };
        let said = format!(
            "elect serve: listening on http://{addr} ({reach})\nlimits per request: {} processes ({} checked), {} \
             events, {} states, {} s, {} sweep runs; {} at once{}\n",
            caps.sim_nodes,
            caps.check_nodes,
            caps.events,
            caps.states,
            caps.seconds,
            caps.runs,
            max_busy,
            if caps.allow_files { "; requests may name files" } else { "; no file access" }
        );
        // Said once; a reader that has gone away (a closed pipe) does not stop the server.
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(said.as_bytes()).and_then(|()| out.flush());
        drop(out);
        tokio::select! {
            () = accept(listener, server) => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok::<_, anyhow::Error>(())
    })?;
    runtime.shutdown_timeout(Duration::from_millis(100));
    Ok(Outcome::Interrupted)
}

/// Accepts connections for ever, each served by a task of its own; beyond [`MAX_CONNECTIONS`] the oldest is closed.
async fn accept(listener: TcpListener, server: Arc<Server>) {
    let limits = elect_net::HttpLimits { connections: MAX_CONNECTIONS, header_timeout: HEADER_TIMEOUT };
    elect_net::serve_http(listener, limits, move |request| respond(request, server.clone())).await;
}

/// The response to one request.
async fn respond(request: Request<Incoming>, server: Arc<Server>) -> Response<Full<Bytes>> {
    let answer = route(request, &server).await;
    let mut response = Response::new(Full::new(Bytes::from(answer.body)));
    *response.status_mut() = answer.status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(answer.content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    for (name, value) in answer.headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    response
}

async fn route(request: Request<Incoming>, server: &Arc<Server>) -> Answer {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or_default().to_owned();
    let caps = server.caps;
    let get = method == Method::GET || method == Method::HEAD;
    match (get, path.as_str()) {
        (true, "/" | "/index.html") => Answer {
            status: StatusCode::OK,
            content_type: "text/html; charset=utf-8",
            body: PAGE.into(),
            headers: Vec::new(),
        },
        (true, "/canvas.js") => script(elect_viz::CANVAS_JS),
        (true, "/live.js") => script(LIVE_JS),
        (_, p) if book::serves(p) => book::answer(get, p),
        (true, "/api/limits") => Answer::value(&api::limits_json(&caps, server.max_busy)),
        (true, "/api/rules") => api::rules(&query),
        (true, "/api/presets") => Answer::value(&serde_json::json!({ "presets": crate::presets::presets() })),
        (true, "/api/sim") => compute(server, move || api::sim(&query, &caps, false)).await,
        (true, "/api/sim/view") => compute(server, move || api::sim(&query, &caps, true)).await,
        (true, "/api/check") => compute(server, move || api::check(&query, &caps, false)).await,
        (true, "/api/check/view") => compute(server, move || api::check(&query, &caps, true)).await,
        (true, "/api/sweep") => compute(server, move || api::sweep(&query, &caps)).await,
        (false, "/api/explore") if method == Method::POST => {
            let body = match read_body(request).await {
                Ok(body) => body,
                Err(answer) => return answer,
            };
            let sessions = server.sessions.clone();
            compute(server, move || sessions.open(&body, &caps)).await
        }
        (_, p) if p.starts_with("/api/explore/") => {
            let rest = p["/api/explore/".len()..].to_owned();
            let (id, verb) = rest.split_once('/').map_or((rest.as_str(), ""), |(i, v)| (i, v));
            let (id, verb) = (id.to_owned(), verb.to_owned());
            let body = if method == Method::POST {
                match read_body(request).await {
                    Ok(body) => body,
                    Err(answer) => return answer,
                }
            } else {
                Vec::new()
            };
            if !matches!((get, verb.as_str()), (true, "") | (false, "step" | "back" | "find")) {
                return Answer::error(StatusCode::NOT_FOUND, format!("not found: {method} {p}"));
            }
            let sessions = server.sessions.clone();
            compute(server, move || sessions.act(&id, &verb, &body, &caps)).await
        }
        (
            _,
            p @ ("/" | "/index.html" | "/canvas.js" | "/live.js" | "/api/limits" | "/api/rules" | "/api/presets"
            | "/api/sim" | "/api/sim/view" | "/api/check" | "/api/check/view" | "/api/sweep" | "/api/explore"),
        ) => Answer::error(StatusCode::METHOD_NOT_ALLOWED, format!("method not allowed: {method} {p}"))
            .with("allow", if p == "/api/explore" { "POST".into() } else { "GET".into() }),
        (_, p) => Answer::error(
            StatusCode::NOT_FOUND,
            format!("not found: {p} (the page is at /, the book under /book/, the API under /api/)"),
        ),
    }
}

/// One of the page's scripts.
fn script(body: &'static str) -> Answer {
    Answer {
        status: StatusCode::OK,
        content_type: "text/javascript; charset=utf-8",
        body: body.into(),
        headers: Vec::new(),
    }
}

async fn read_body(request: Request<Incoming>) -> Result<Vec<u8>, Answer> {
    match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(body) => Ok(body.to_bytes().to_vec()),
        Err(_) => Err(Answer::bad(format!("the request body is larger than {MAX_BODY} bytes, or was cut short"))),
    }
}

/// Runs `work` on a blocking thread if fewer than the most requests allowed are computing (503 otherwise), with
/// the time limit; a panic is caught and answered with 500. A request that passes the time limit is answered,
/// and its thread counts against the requests computing until it ends.
async fn compute(server: &Arc<Server>, work: impl FnOnce() -> Answer + Send + 'static) -> Answer {
    let busy = server.busy.fetch_add(1, Ordering::SeqCst);
    let guard = Busy(server.clone());
    if busy >= server.max_busy {
        drop(guard);
        return Answer::error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "busy: {} requests are computing, the most this server runs at once; retry in a second",
                server.max_busy
            ),
        )
        .with("retry-after", "1".into());
    }
    let limit = server.caps.time() + Duration::from_secs(1);
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let task = tokio::task::spawn_blocking(move || {
        let _guard = guard;
        CANCEL.with(|c| *c.borrow_mut() = Some(flag));
        let answer = catch_unwind(AssertUnwindSafe(work));
        CANCEL.with(|c| *c.borrow_mut() = None);
        answer
    });
    match tokio::time::timeout(limit, task).await {
        Ok(Ok(Ok(answer))) => answer,
        Ok(Ok(Err(panic))) => api::panicked(&*panic, &server.caps),
        Ok(Err(e)) => Answer::error(StatusCode::INTERNAL_SERVER_ERROR, format!("internal error: {e}")),
        Err(_) => {
            // The answer goes now, and the work stops at its next look at the flag, instead of holding a place
            // among the requests computing.
            cancel.store(true, Ordering::Relaxed);
            Answer::bad(api::over_time(&server.caps))
        }
    }
}

/// One request computing: counted while it lives.
struct Busy(Arc<Server>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}
