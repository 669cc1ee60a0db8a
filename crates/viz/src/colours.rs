//! One colour per message kind, the same in every picture, page and file: a kind is coloured by its name, not by
//! the order a run happens to send it in. The election's own messages take the bright colours, no two kinds of one
//! algorithm alike; what the leader monitor and the member add around it (heartbeats, joins, pre-votes,
//! announcements, transfers, lease rounds, configurations) takes muted greys and browns, so that the election stands out from the housekeeping.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Colours for the election's own messages (Tableau 10 without its grey, then three more).
const BRIGHT: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf",
    "#bcbd22", "#6b6ecf",
];

/// The leader monitor's and the member's kinds, in muted colours of their own.
const AROUND: [(&str, &str); 13] = [
    ("heartbeat", "#9e9e9e"),
    ("join", "#616161"),
    ("hop-ack", "#c7c7c7"),
    ("pre-vote", "#78909c"),
    ("pre-vote-reply", "#b0bec5"),
    ("announce", "#455a64"),
    ("leaving", "#8d6e63"),
    ("ask", "#a1887f"),
    ("transfer", "#5d4037"),
    ("lease", "#6d4c41"),
    ("lease-ack", "#bcaaa4"),
    ("config", "#546e7a"),
    ("config-ack", "#90a4ae"),
];

/// Every kind an algorithm of elect sends, with its colour: each kind, in the order the algorithms (in
/// presentation order) first send it, takes the first bright colour that no kind it shares an algorithm with has
/// (a greedy colouring: no algorithm has as many kinds as there are colours, so there always is one).
fn table() -> &'static BTreeMap<&'static str, &'static str> {
    static TABLE: OnceLock<BTreeMap<&'static str, &'static str>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let groups: Vec<Vec<&'static str>> =
            elect_algos::registry::all().iter().map(|info| elect_algos::kinds(info.name).unwrap_or_default()).collect();
        let mut table: BTreeMap<&'static str, &'static str> = AROUND.into_iter().collect();
        for (k, &kind) in groups.iter().flatten().enumerate() {
            if table.contains_key(kind) {
                continue;
            }
            let taken: Vec<&str> = groups
                .iter()
                .filter(|g| g.contains(&kind))
                .flatten()
                .filter_map(|other| table.get(other).copied())
                .collect();
            let colour = BRIGHT.iter().find(|c| !taken.contains(c)).unwrap_or(&BRIGHT[k % BRIGHT.len()]);
            table.insert(kind, colour);
        }
        table
    })
}

/// The colour of messages of kind `kind`, wherever they are drawn. A kind no algorithm of elect sends (a
/// synchronizer's, a test's) gets a bright colour from a hash of its name, so it too is the same everywhere.
pub fn kind_colour(kind: &str) -> &'static str {
    table().get(kind).copied().unwrap_or_else(|| {
        // FNV-1a: stable across platforms and releases, unlike the standard library's hasher.
        let hash = kind.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
        BRIGHT[hash as usize % BRIGHT.len()]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_of_one_algorithm_and_its_monitor_have_different_colours() {
        for info in elect_algos::registry::all() {
            let mut kinds = elect_algos::kinds(info.name).unwrap();
            kinds.extend_from_slice(elect_algos::member::MEMBER_AND_MONITOR_KINDS);
            kinds.sort_unstable();
            kinds.dedup();
            let mut colours: Vec<&str> = kinds.iter().map(|k| kind_colour(k)).collect();
            colours.sort_unstable();
            colours.dedup();
            assert_eq!(colours.len(), kinds.len(), "{}: two of {kinds:?} share a colour", info.name);
        }
    }

    #[test]
    fn a_kind_has_one_colour_whatever_the_run() {
        assert_eq!(kind_colour("election"), kind_colour("election"));
        assert_eq!(kind_colour("heartbeat"), "#9e9e9e");
        assert!(BRIGHT.contains(&kind_colour("a kind nobody sends")));
    }
}
