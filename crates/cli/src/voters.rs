//! `elect voters`: read or change the voters of a running cluster through its members' HTTP endpoints
//! (`elect node --http`), with [`elect_net::voters`]. Given the address of one member or of several, a change goes
//! to the one that leads, and is answered once it is done (exit 0), refused (exit 1, with the reason), or given up
//! (exit 1: it may or may not take effect). Adding a voter or removing a learner changes nothing and succeeds, so
//! that a script may ask again; removing the leader hands leadership over first. An address that cannot be reached
//! or does not answer as a member does exits with status 2.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use elect_net::HttpToken;
use elect_net::voters::{Change, VotersError};
use serde_json::Value;

use crate::outcome::{BadInput, Outcome, Refused};

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
        (Some(id), _) => Some(Change::Add(id)),
        (_, Some(id)) => Some(Change::Remove(id)),
        _ => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("async runtime")?;
    let refused = |e: VotersError| -> anyhow::Error {
        match e {
            VotersError::Unreachable(e) => BadInput(e).into(),
            VotersError::Refused(e) => Refused(e).into(),
        }
    };
    let Some(change) = change else {
        let doc = runtime.block_on(elect_net::voters::read(&args.http[0])).map_err(refused)?;
        print(&doc, args.json);
        return Ok(Outcome::Held);
    };
    let changed = runtime.block_on(elect_net::voters::change(&args.http, change, token.as_deref())).map_err(refused)?;
    if let (Change::Remove(id), Some(to)) = (change, changed.handed_over_to) {
        eprintln!("member {id} led: handed leadership over to member {to} first");
    }
    print(&changed.doc, args.json);
    match changed.outcome {
        elect_net::voters::Outcome::Done => Ok(Outcome::Held),
        elect_net::voters::Outcome::AlreadySo(done) => {
            eprintln!("{done}: nothing to change");
            Ok(Outcome::Held)
        }
        elect_net::voters::Outcome::StillRunning(why) | elect_net::voters::Outcome::Refused(why) => {
            Err(Refused(why).into())
        }
    }
}

/// `HOST:PORT`, as a flag gives it.
fn host_port(s: &str) -> Result<String, String> {
    match s.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => Ok(s.to_owned()),
        _ => Err(format!("{s:?}: expected HOST:PORT, e.g. 127.0.0.1:9101")),
    }
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
