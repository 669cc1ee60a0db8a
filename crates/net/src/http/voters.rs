//! `GET /voters` and `POST /voters?add=ID` / `POST /voters?remove=ID`: the voting configuration a member holds, and
//! a change of it, one member at a time, made by the leader (see `elect_algos::member`'s voting configurations).
//! A change is answered once it is over: `200` done (with the new configuration), `409` refused (nothing changed:
//! this member does not lead, a change is in progress, the member named cannot be added or removed), `503` given up
//! (it may or may not take effect: read `GET /voters` again), `202` still running after [`CHANGE_WAIT`].

use std::time::Duration;

use elect_algos::member::{ChangeState, VoterChange};
use elect_core::NodeId;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::json;
use tokio::sync::oneshot;
use tracing::info;

use super::respond::{accepted, json_response, plain, text};
use super::shared::Shared;
use crate::runner::Request as ToTask;
use crate::status::outcome;

/// How long `POST /voters` waits for the change to be over before it answers `202` (the change goes on).
pub(crate) const CHANGE_WAIT: Duration = Duration::from_secs(30);

/// `GET /voters`.
pub(super) fn voters(shared: &Shared) -> Response<Full<Bytes>> {
    json_response(&shared.board.voters_json())
}

/// `POST /voters?add=ID` or `?remove=ID`.
pub(super) async fn change(request: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    if let Some(refused) = shared.guard.refuses(request) {
        return refused;
    }
    let change = match change_query(request.uri().query(), &shared.members) {
        Ok(change) => change,
        Err(problem) => return text(StatusCode::BAD_REQUEST, format!("bad request: {problem}\n")),
    };
    let (reply, answer) = oneshot::channel();
    if shared.requests.send(ToTask::Voters(change, reply)).is_err() {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "unavailable: the member has stopped\n");
    }
    info!(%change, "asked over HTTP to change the voters");
    let report = match tokio::time::timeout(CHANGE_WAIT, answer).await {
        Ok(Ok(report)) => report,
        Ok(Err(_)) => return plain(StatusCode::SERVICE_UNAVAILABLE, "unavailable: the member has stopped\n"),
        Err(_) => {
            let mut doc = shared.board.voters_json();
            doc["outcome"] = json!({ "state": "running" });
            return accepted(&doc);
        }
    };
    let status = match report.state {
        ChangeState::Done(_) => StatusCode::OK,
        ChangeState::Refused(_) => StatusCode::CONFLICT,
        ChangeState::Running | ChangeState::Failed(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    let mut doc = shared.board.voters_json();
    doc["change"] = json!(change.to_string());
    doc["outcome"] = outcome(report.state);
    if let ChangeState::Refused(_) = report.state {
        doc["leader"] = json!(shared.board.leader().shown.leader.map(|l| l.0));
    }
    let mut response = json_response(&doc);
    *response.status_mut() = status;
    response
}

/// The change `POST /voters` asks for: `add=ID` or `remove=ID`, a member of the cluster.
fn change_query(query: Option<&str>, members: &[NodeId]) -> Result<VoterChange, String> {
    let mut change = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let id = || value.parse::<u32>().map(NodeId).map_err(|_| format!("{key}={value:?}: not a member id"));
        let asked = match key {
            "add" => VoterChange::Add(id()?),
            "remove" => VoterChange::Remove(id()?),
            _ => return Err(format!("{key:?}: the parameter of /voters is add=ID or remove=ID")),
        };
        if change.replace(asked).is_some() {
            return Err("one change at a time: add=ID or remove=ID, once".to_owned());
        }
    }
    let change = change.ok_or("name the change: /voters?add=ID or /voters?remove=ID")?;
    let (VoterChange::Add(id) | VoterChange::Remove(id)) = change;
    if !members.contains(&id) {
        let ids: Vec<String> = members.iter().map(ToString::to_string).collect();
        return Err(format!("{id}: no such member (the members are {})", ids.join(", ")));
    }
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_names_one_member_to_add_or_remove() {
        let members = [NodeId(1), NodeId(2), NodeId(3)];
        assert_eq!(change_query(Some("add=3"), &members), Ok(VoterChange::Add(NodeId(3))));
        assert_eq!(change_query(Some("remove=1"), &members), Ok(VoterChange::Remove(NodeId(1))));
        for (bad, says) in [
            (None, "name the change"),
            (Some("add=x"), "not a member id"),
            (Some("add=9"), "no such member (the members are 1, 2, 3)"),
            (Some("add=2&remove=3"), "one change at a time"),
            (Some("to=2"), "the parameter of /voters"),
        ] {
            let problem = change_query(bad, &members).unwrap_err();
            assert!(problem.contains(says), "{bad:?}: {problem}");
        }
    }
}
