//! The groups a run ends with, for algorithms that keep several groups side by side (the Invitation algorithm):
//! `elect sim` prints them under the leader, as Garcia-Molina's notes write them, "{2, 3} coordinated by 3".
//!
//! They are read from the report's final statuses (each process's state, coordinator and group when the run
//! ended, and whether it is crashed), which the simulator takes from its own state at the end.

use std::collections::BTreeMap;

use elect_algos::Elects;
use elect_core::{GroupId, NodeId, State};
use elect_scenario::SimConfig;
use elect_sim::FinalStatus;

/// Whether the run's algorithm keeps several groups side by side, so that its text names them.
pub(crate) fn wanted(cfg: &SimConfig) -> bool {
    elect_algos::lookup(&cfg.algorithm).is_ok_and(|info| info.elects == Elects::PerGroup)
}

/// The line `elect sim` prints: each group with its members and coordinator, then the processes that are down.
/// A member not in state Normal says its state, so a group caught in the middle of a merge shows as one.
pub(crate) fn line(statuses: &[FinalStatus]) -> Option<String> {
    let mut by_id: Vec<&FinalStatus> = statuses.iter().collect();
    by_id.sort_by_key(|s| s.node);
    let mut groups: BTreeMap<(Option<NodeId>, Option<GroupId>), Vec<String>> = BTreeMap::new();
    let mut down = Vec::new();
    for s in by_id {
        let (id, status) = (s.node, s.status);
        let member = match status.state {
            _ if s.crashed => None,
            State::Down => None,
            State::Normal => Some(id.to_string()),
            State::Election => Some(format!("{id} (Election)")),
            State::Reorganization => Some(format!("{id} (Reorganization)")),
        };
        match member {
            Some(member) => groups.entry((status.leader, status.group)).or_default().push(member),
            None => down.push(id.to_string()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use elect_core::{Epoch, Status};

    fn at(node: u32, state: State, leader: u32, group: (u32, u32), crashed: bool) -> FinalStatus {
        let group = GroupId { counter: group.0, creator: NodeId(group.1) };
        let status = Status { state, leader: Some(NodeId(leader)), epoch: Epoch::ZERO, group: Some(group) };
        FinalStatus { node: NodeId(node), status, crashed }
    }

    #[test]
    fn the_final_statuses_make_the_groups_and_crashed_processes_are_down() {
        let statuses = [
            at(3, State::Election, 3, (2, 3), false),
            at(1, State::Normal, 1, (1, 1), true),
            at(2, State::Normal, 3, (2, 3), false),
            at(4, State::Normal, 4, (1, 4), false),
            at(5, State::Down, 5, (1, 5), false),
        ];
        assert_eq!(
            line(&statuses).as_deref(),
            Some("{2, 3 (Election)} coordinated by 3, {4} coordinated by 4; down: 1, 5")
        );
        assert_eq!(line(&[]), None);
        assert_eq!(line(&statuses[1..2]).as_deref(), Some("none; down: 1"));
    }
}
