//! A scenario file's `[expect]` table judged against the report of its run.

use elect_core::{NodeId, Property};
use elect_scenario::{Expect, format_time};

use crate::report::Report;

/// One expectation and whether the run met it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// What was expected, e.g. `leader 6`.
    pub expected: String,
    /// What the run gave, when it differs.
    pub actual: Option<String>,
}

impl Judgement {
    /// Whether the run met the expectation.
    pub fn met(&self) -> bool {
        self.actual.is_none()
    }
}

/// An expectation that cannot be judged: an error in the file, not a failed expectation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JudgeError {
    /// An expected message kind the algorithm does not have.
    #[error("{algorithm} has no message kind '{kind}' (its kinds: {})", kinds.join(", "))]
    UnknownKind {
        /// The algorithm.
        algorithm: &'static str,
        /// The kind expected.
        kind: String,
        /// The algorithm's kinds.
        kinds: Vec<&'static str>,
    },
}

/// Judges `report` against every expectation of `expect`, in a fixed order.
pub fn judge(expect: &Expect, report: &Report) -> Result<Vec<Judgement>, JudgeError> {
    let mut out = Vec::new();
    let mut check = |expected: String, actual: String| {
        let met = expected.split_once(' ').is_some_and(|(_, want)| want == actual);
        out.push(Judgement { expected, actual: (!met).then_some(actual) });
    };
    let show_leader = |l: Option<NodeId>| l.map_or_else(|| "none".to_owned(), |id| id.to_string());
    if let Some(leader) = expect.leader {
        check(format!("leader {}", show_leader(leader)), show_leader(report.leader));
    }
    if let Some(agreed) = expect.agreed {
        check(format!("agreed {agreed}"), report.agreed.to_string());
    }
    if let Some(ok) = expect.ok {
        check(format!("ok {ok}"), report.ok().to_string());
    }
    let violated = |p: Property| report.properties.violations.iter().any(|v| v.property == p);
    for &p in &expect.held {
        let checked = report.properties.checked.iter().any(|&(name, _)| name == p.name());
        let skipped = report.properties.skipped.iter().find(|s| s.property == p);
        let actual = match (checked, skipped) {
            (false, _) => "not checked".to_owned(),
            (true, Some(s)) => format!("not judged ({})", s.reason),
            (true, None) if violated(p) => "violated".to_owned(),
            (true, None) => "held".to_owned(),
        };
        check(format!("{p} held"), actual);
    }
    for &p in &expect.violated {
        check(format!("{p} violated"), if violated(p) { "violated" } else { "not violated" }.to_owned());
    }
    if let Some(m) = expect.messages {
        check(format!("messages {m}"), report.messages.total.to_string());
    }
    for (kind, &count) in &expect.by_kind {
        if !report.messages.by_kind.iter().any(|&(k, _)| k == kind) {
            let kinds = report.messages.by_kind.iter().map(|&(k, _)| k).collect();
            return Err(JudgeError::UnknownKind { algorithm: report.algorithm, kind: kind.clone(), kinds });
        }
        check(format!("{kind} {count}"), report.messages.kind(kind).to_string());
    }
    if let Some(at) = expect.elected_at {
        let actual = report.elected_at.map_or_else(|| "never".to_owned(), |t| format_time(t.ticks()));
        check(format!("elected-at {}", format_time(at)), actual);
    }
    if let Some(t) = expect.terminated {
        check(format!("terminated {t}"), report.terminated.to_string());
    }
    Ok(out)
}
