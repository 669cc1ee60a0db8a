//! The groups a run ends with, for algorithms that keep several groups side by side (the Invitation algorithm):
//! `elect sim` prints them under the leader, as Garcia-Molina's notes write them, "{2, 3} coordinated by 3".
//!
//! A report holds one leader, not the groups, so they are read from the run's trace: the last status of every
//! process (its state, coordinator and group), and its crashes. Only the runs that print them as text are traced
//! for it.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

use elect_algos::Elects;
use elect_core::{GroupId, NodeId, State};
use elect_scenario::SimConfig;

/// Where each process stands at the end of the run, read from its trace.
#[derive(Clone, Default)]
pub(crate) struct Groups(Arc<Mutex<Reading>>);

#[derive(Default)]
struct Reading {
    /// The part of a line not yet ended.
    partial: Vec<u8>,
    /// Each process's last state, coordinator and group, by id.
    last: BTreeMap<u32, (State, Option<NodeId>, Option<GroupId>)>,
}

/// The fields of a trace line this reads; the others are skipped.
#[derive(serde::Deserialize)]
struct Line {
    ev: String,
    node: Option<NodeId>,
    #[serde(default)]
    state: String,
    leader: Option<NodeId>,
    group: Option<GroupId>,
}

impl Groups {
    /// A reader of the groups, if the run's algorithm keeps several groups side by side.
    pub(crate) fn wanted(cfg: &SimConfig) -> Option<Self> {
        let info = elect_algos::lookup(&cfg.algorithm).ok()?;
        (info.elects == Elects::PerGroup).then(Self::default)
    }

    /// The trace sink that feeds it.
    pub(crate) fn sink(&self) -> Box<dyn Write + Send> {
        Box::new(self.clone())
    }

    /// The line `elect sim` prints: each group with its members and coordinator, then the processes that are down.
    /// A member not in state Normal says its state, so a group caught in the middle of a merge shows as one.
    pub(crate) fn line(&self) -> Option<String> {
        let reading = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut groups: BTreeMap<(Option<NodeId>, Option<GroupId>), Vec<String>> = BTreeMap::new();
        let mut down = Vec::new();
        for (&id, &(state, leader, group)) in &reading.last {
            match state {
                State::Down => down.push(id.to_string()),
                State::Normal => groups.entry((leader, group)).or_default().push(id.to_string()),
                State::Election => groups.entry((leader, group)).or_default().push(format!("{id} (Election)")),
                State::Reorganization => {
                    groups.entry((leader, group)).or_default().push(format!("{id} (Reorganization)"));
                }
            }
        }
        if groups.is_empty() && down.is_empty() {
            return None;
        }
        let mut parts: Vec<String> = groups
            .into_iter()
            .map(|((leader, _), members)| {
                let by = leader.map_or_else(|| "nobody".to_owned(), |l| l.to_string());
                format!("{{{}}} coordinated by {by}", members.join(", "))
            })
            .collect();
        if parts.is_empty() {
            parts.push("none".to_owned());
        }
        let mut line = parts.join(", ");
        if !down.is_empty() {
            line.push_str(&format!("; down: {}", down.join(", ")));
        }
        Some(line)
    }
}

impl Reading {
    fn read(&mut self, line: &[u8]) {
        // Only statuses and crashes matter; the other records are skipped unparsed.
        let wanted = line.starts_with(br#"{"ev":"status""#) || line.starts_with(br#"{"ev":"crash""#);
        let Some(line) = wanted.then(|| serde_json::from_slice::<Line>(line).ok()).flatten() else {
            return;
        };
        let Some(node) = line.node else { return };
        let entry = self.last.entry(node.0).or_insert((State::Down, None, None));
        if line.ev == "crash" {
            *entry = (State::Down, None, None);
            return;
        }
        let state = [State::Down, State::Election, State::Reorganization, State::Normal]
            .into_iter()
            .find(|s| s.name() == line.state)
            .unwrap_or(State::Down);
        *entry = (state, line.leader, line.group);
    }
}

impl Write for Groups {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut reading = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut rest = buf;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let mut line = std::mem::take(&mut reading.partial);
            line.extend_from_slice(&rest[..end]);
            reading.read(&line);
            rest = &rest[end + 1..];
        }
        reading.partial.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_status_of_each_process_makes_the_groups_and_crashes_make_it_down() {
        let mut g = Groups::default();
        let trace = concat!(
            r#"{"ev":"status","t":0,"node":1,"state":"normal","leader":1,"epoch":0,"group":{"counter":1,"creator":1}}"#,
            "\n",
            r#"{"ev":"status","t":0,"node":2,"state":"normal","leader":3,"epoch":0,"group":{"counter":2,"creator":3}}"#,
            "\n",
            r#"{"ev":"send","t":0,"node":2,"to":3,"id":1,"at":1,"kind":"ack","text":"ack"}"#,
            "\n",
            r#"{"ev":"status","t":0,"node":3,"state":"election","leader":3,"epoch":0,"group":{"counter":2,"creator":3}}"#,
            "\n",
            r#"{"ev":"crash","t":1,"node":1}"#,
            "\n",
        );
        // Written in pieces that cut lines, as a buffered writer may.
        let (a, b) = trace.split_at(100);
        g.write_all(a.as_bytes()).unwrap();
        g.write_all(b.as_bytes()).unwrap();
        assert_eq!(g.line().as_deref(), Some("{2, 3 (Election)} coordinated by 3; down: 1"));
        assert_eq!(Groups::default().line(), None);
    }
}
