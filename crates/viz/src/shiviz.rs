//! Export to ShiViz's log format, so that existing space-time tools read elect's runs.
//!
//! ShiViz orders events by vector clocks, not by time. Each process's clock counts its own events from 1; a
//! delivery merges in the clock its message carried (the sender's at the send) before counting itself. The file
//! opens with ShiViz's default parsing expression `(?<event>.*)\n(?<host>\S*) (?<clock>{.*})` on the first line
//! and an empty second line (one execution), then two lines per event: a description, and the host (`n` and
//! the id) with its clock as JSON.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::trace::{Run, What};

/// ShiViz's default expression: the event's description on one line, the host and its clock on the next.
pub const SHIVIZ_REGEX: &str = r"(?<event>.*)\n(?<host>\S*) (?<clock>{.*})";

/// Why a run cannot be exported.
#[derive(Debug, thiserror::Error)]
#[error("the run has more events than were kept ({0}); ShiViz's log needs every one to order them")]
pub struct Truncated(pub usize);

/// A sparse vector clock: position → count.
type Clock = BTreeMap<u32, u64>;

/// `run` as a ShiViz log.
pub fn shiviz_log(run: &Run) -> Result<String, Truncated> {
    if run.truncated {
        return Err(Truncated(run.events.len()));
    }
    let mut out = format!("{SHIVIZ_REGEX}\n\n");
    let mut clocks: Vec<Clock> = vec![Clock::new(); run.len()];
    let mut carried: BTreeMap<u64, Clock> = BTreeMap::new();
    let id = |p: u32| run.ids[p as usize];
    for e in &run.events {
        if e.node == u32::MAX {
            continue;
        }
        let description = match &e.what {
            What::Crash => "crash".to_owned(),
            What::Recover => "recover".to_owned(),
            What::Start => "start".to_owned(),
            What::Command(cmd) => format!("command {cmd}"),
            What::Send { to, id: m, kind, .. } => format!("send {} #{m} to {}", run.kinds[*kind as usize], id(*to)),
            What::Deliver { from, id: m, kind } => {
                if let Some(theirs) = carried.get(m) {
                    let mine = &mut clocks[e.node as usize];
                    for (&p, &c) in theirs {
                        let entry = mine.entry(p).or_insert(0);
                        *entry = (*entry).max(c);
                    }
                }
                format!("deliver {} #{m} from {}", run.kinds[*kind as usize], id(*from))
            }
            What::Timer => "timer".to_owned(),
            What::Status { state, leader, epoch } => {
                let leader = leader.map_or_else(|| "none".to_owned(), |l| id(l).to_string());
                format!("status {} leader {leader} epoch {}", state.name(), epoch.bits())
            }
            What::Elected => "elected".to_owned(),
            What::Parent(p) => format!("parent {}", p.map_or_else(|| "none".to_owned(), |p| id(p).to_string())),
            What::Violation(v) => format!("violation {v}"),
            What::Drop { .. } => continue,
        };
        let clock = &mut clocks[e.node as usize];
        *clock.entry(e.node).or_insert(0) += 1;
        if let What::Send { id: m, .. } = e.what {
            carried.insert(m, clock.clone());
        }
        let _ = writeln!(out, "t={} {description}", e.t);
        let _ = write!(out, "n{} {{", id(e.node));
        for (k, (&p, &c)) in clock.iter().enumerate() {
            let comma = if k == 0 { "" } else { ", " };
            let _ = write!(out, "{comma}\"n{}\": {c}", id(p));
        }
        out.push_str("}\n");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Limits;

    #[test]
    fn clocks_merge_on_delivery() {
        let text = r#"{"ev":"run","algorithm":"x","topology":"ring","ids":[1,2]}
{"ev":"start","t":0,"node":1}
{"ev":"send","t":0,"node":1,"to":2,"id":1,"at":1,"kind":"token","text":"token 1"}
{"ev":"start","t":0,"node":2}
{"ev":"deliver","t":1,"node":2,"from":1,"id":1,"kind":"token","text":"token 1"}
{"ev":"drop","t":1,"node":2,"from":1,"id":1,"reason":"down"}
"#;
        let run = Run::parse(text, Limits::default()).unwrap();
        let log = shiviz_log(&run).unwrap();
        let expected = "(?<event>.*)\\n(?<host>\\S*) (?<clock>{.*})\n\nt=0 start\nn1 {\"n1\": 1}\n\
                        t=0 send token #1 to 2\nn1 {\"n1\": 2}\nt=0 start\nn2 {\"n2\": 1}\n\
                        t=1 deliver token #1 from 1\nn2 {\"n1\": 2, \"n2\": 2}\n";
        assert_eq!(log, expected);
    }
}
