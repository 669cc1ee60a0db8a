//! The fault model: crashes and recoveries of processes, lost and duplicated messages, links going down, two-way
//! and one-way partitions. Each fault parses from its command-line syntax and prints back to it.
//!
//! | flag | syntax | meaning |
//! |---|---|---|
//! | `--crash` | `ID@T` | process `ID` stops at `T` (`@0`: down from the start) |
//! | `--recover` | `ID@T` | it restarts at `T` from what it persisted |
//! | `--loss` | `P`, `A-B:P`, `A>B:P` | each message is lost with probability `P` (on every link, on both directions of one, on one direction) |
//! | `--duplicate` | `P` | each message is delivered twice with probability `P` |
//! | `--link-down` | `A-B@T`, `A>B@T..U` | the link (both ways, or one way) is down from `T` (until `U`) |
//! | `--partition` | `1,2\|3,4@T..U`, `1,2>3,4@T..U` | processes in different groups cannot talk (or the first group cannot reach the second) |

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use elect_core::NodeId;

use crate::spec::SpecError;
use crate::time::{format_time, parse_time};

/// A probability, in millionths (exact, comparable, printable).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Probability(pub u32);

impl Probability {
    /// Never.
    pub const NEVER: Self = Self(0);
    /// Always.
    pub const ALWAYS: Self = Self(1_000_000);

    /// Whether the event is possible at all.
    pub fn is_never(self) -> bool {
        self.0 == 0
    }
}

impl FromStr for Probability {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let p: f64 = s.trim().parse().map_err(|_| SpecError::NotAProbability(crate::shorten(s).into_owned()))?;
        if !(0.0..=1.0).contains(&p) {
            return Err(SpecError::ProbabilityRange(crate::shorten(s).into_owned()));
        }
        Ok(Self((p * 1e6).round() as u32))
    }
}

impl fmt::Display for Probability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = format!("{:.6}", f64::from(self.0) / 1e6);
        f.write_str(text.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// Something that happens to one process at a time (`ID@T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeAt {
    /// The process.
    pub id: NodeId,
    /// When, in ticks.
    pub at: u64,
}

impl FromStr for NodeAt {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let (id, at) = s.trim().split_once('@').ok_or_else(|| SpecError::malformed("", s, SpecError::NodeAt))?;
        let id = parse_id(id).map_err(|e| SpecError::malformed("", s, e))?;
        let at = parse_time(at).map_err(|e| SpecError::malformed("", s, e))?;
        Ok(Self { id, at })
    }
}

impl fmt::Display for NodeAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.id, format_time(self.at))
    }
}

fn parse_id(s: &str) -> Result<NodeId, SpecError> {
    s.trim().parse().map(NodeId).map_err(|_| SpecError::NotAnId(crate::shorten(s.trim()).into_owned()))
}

/// A leader told to hand leadership over to another process at a time (`FROM>TO@T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The process told, which acts on it if it leads then.
    pub from: NodeId,
    /// The process it names.
    pub to: NodeId,
    /// When, in ticks.
    pub at: u64,
}

impl FromStr for Transfer {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let malformed = |e: SpecError| SpecError::malformed("transfer ", s, e);
        let (ids, at) = s.trim().split_once('@').ok_or_else(|| malformed(SpecError::Transfer))?;
        let (from, to) = ids.split_once('>').ok_or_else(|| malformed(SpecError::Transfer))?;
        let (from, to) = (parse_id(from).map_err(malformed)?, parse_id(to).map_err(malformed)?);
        if from == to {
            return Err(malformed(SpecError::SelfTransfer));
        }
        let at = parse_time(at).map_err(|e| SpecError::malformed("transfer ", s, e))?;
        Ok(Self { from, to, at })
    }
}

impl fmt::Display for Transfer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}>{}@{}", self.from, self.to, format_time(self.at))
    }
}

/// When a fault holds: from `from` on, until `until` if given (`@T` or `@T..U`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Start, in ticks.
    pub from: u64,
    /// End, in ticks, if it heals.
    pub until: Option<u64>,
}

impl FromStr for Window {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let (from, until) = match s.split_once("..") {
            Some((a, b)) => (parse_time(a)?, Some(parse_time(b)?)),
            None => (parse_time(s)?, None),
        };
        if until.is_some_and(|u| u <= from) {
            return Err(SpecError::EmptyWindow(s.to_owned()));
        }
        Ok(Self { from, until })
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", format_time(self.from))?;
        match self.until {
            Some(u) => write!(f, "..{}", format_time(u)),
            None => Ok(()),
        }
    }
}

/// A link between two processes, both ways (`A-B`) or one way (`A>B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Link {
    /// One end (the sender, one way).
    pub a: NodeId,
    /// The other end (the receiver, one way).
    pub b: NodeId,
    /// Whether only messages from `a` to `b` are affected.
    pub one_way: bool,
}

impl FromStr for Link {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let (a, b, one_way) = match (s.split_once('>'), s.split_once('-')) {
            (Some((a, b)), _) => (a, b, true),
            (None, Some((a, b))) => (a, b, false),
            _ => return Err(SpecError::NotALink(crate::shorten(s).into_owned())),
        };
        let (a, b) = (parse_id(a)?, parse_id(b)?);
        if a == b {
            return Err(SpecError::SelfLink(crate::shorten(s).into_owned()));
        }
        Ok(Self { a, b, one_way })
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.a, if self.one_way { ">" } else { "-" }, self.b)
    }
}

/// A link that goes down (`A-B@T..U`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkDown {
    /// The link.
    pub link: Link,
    /// When.
    pub window: Window,
}

impl FromStr for LinkDown {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let fail = |e: SpecError| SpecError::malformed("link fault ", s, e);
        let (link, window) = s.trim().split_once('@').ok_or_else(|| fail(SpecError::LinkFault))?;
        Ok(Self { link: link.parse().map_err(fail)?, window: window.parse().map_err(fail)? })
    }
}

impl fmt::Display for LinkDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.link, self.window)
    }
}

/// A partition (`1,2|3,4@T..U`: the groups cannot talk to each other; `1,2>3,4@T..U`: the first cannot reach the
/// second). Processes in no group are unaffected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// The groups.
    pub groups: Vec<Vec<NodeId>>,
    /// Whether only messages from the first group to the second are affected.
    pub one_way: bool,
    /// When.
    pub window: Window,
}

impl FromStr for Partition {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let fail = |e: SpecError| SpecError::malformed("partition ", s, e);
        let (groups, window) = s.trim().split_once('@').ok_or_else(|| fail(SpecError::PartitionTime))?;
        let one_way = groups.contains('>');
        let parts: Vec<&str> = if one_way { groups.split('>').collect() } else { groups.split('|').collect() };
        if parts.len() < 2 || (one_way && parts.len() != 2) {
            return Err(fail(SpecError::PartitionGroups));
        }
        let groups = parts
            .iter()
            .map(|g| g.split(',').map(parse_id).collect::<Result<Vec<_>, _>>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        let mut all: Vec<NodeId> = groups.iter().flatten().copied().collect();
        all.sort();
        if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
            return Err(fail(SpecError::TwoGroups(w[0])));
        }
        Ok(Self { groups, one_way, window: window.parse().map_err(fail)? })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let groups: Vec<String> =
            self.groups.iter().map(|g| g.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")).collect();
        write!(f, "{}@{}", groups.join(if self.one_way { ">" } else { "|" }), self.window)
    }
}

/// Message loss: everywhere (`P`) or on one link (`A-B:P`, `A>B:P`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loss {
    /// The link, or every link.
    pub link: Option<Link>,
    /// The probability that a message is lost.
    pub p: Probability,
}

impl FromStr for Loss {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let fail = |e: SpecError| SpecError::malformed("loss ", s, e);
        match s.trim().rsplit_once(':') {
            Some((link, p)) => Ok(Self { link: Some(link.parse().map_err(fail)?), p: p.parse().map_err(fail)? }),
            None => Ok(Self { link: None, p: s.parse().map_err(fail)? }),
        }
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.link {
            Some(link) => write!(f, "{link}:{}", self.p),
            None => write!(f, "{}", self.p),
        }
    }
}

/// Refuses a recovery that follows no crash of its process: each recovery of a process needs a crash of it at an
/// earlier time (one crash per recovery), or, with `--crash-leader-at`, a leader crash at an earlier time (whoever
/// leads then may be that process). The error is the first recovery, by id and time, that follows none.
pub(crate) fn check_recoveries(
    crashes: &[NodeAt],
    recoveries: &[NodeAt],
    leader_crashes: &[u64],
) -> Result<(), NodeAt> {
    let mut recoveries: Vec<&NodeAt> = recoveries.iter().collect();
    recoveries.sort_by_key(|r| (r.id, r.at));
    let mut used = vec![false; crashes.len()];
    for r in recoveries {
        // The latest unused crash of the process before the recovery.
        let crash = (0..crashes.len())
            .filter(|&c| !used[c] && crashes[c].id == r.id && crashes[c].at < r.at)
            .max_by_key(|&c| crashes[c].at);
        match crash {
            Some(c) => used[c] = true,
            None if leader_crashes.iter().any(|&t| t < r.at) => {}
            None => return Err(*r),
        }
    }
    Ok(())
}

/// A link fault resolved to directed links between positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkFault {
    /// `(from, to)` positions: one pair, or both directions.
    pub directed: Vec<(u32, u32)>,
    /// When.
    pub window: Window,
}

/// A partition resolved to positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionFault {
    /// The group of each position, from 1; 0 for processes in no group.
    pub group_of: Vec<u16>,
    /// Whether only group 1 → group 2 is cut.
    pub one_way: bool,
    /// When.
    pub window: Window,
}

impl PartitionFault {
    /// Whether this partition stops messages from position `from` to `to`.
    pub fn cuts(&self, from: u32, to: u32) -> bool {
        let (a, b) = (self.group_of[from as usize], self.group_of[to as usize]);
        a != 0 && b != 0 && a != b && (!self.one_way || (a, b) == (1, 2))
    }
}

/// Loss probabilities: on every link, and per directed link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    /// On every link.
    pub everywhere: Probability,
    /// On particular directed links, between positions (overrides `everywhere`).
    pub links: BTreeMap<(u32, u32), Probability>,
}

impl Losses {
    /// The loss probability from position `from` to `to`.
    pub fn on(&self, from: u32, to: u32) -> Probability {
        if self.links.is_empty() {
            self.everywhere
        } else {
            self.links.get(&(from, to)).copied().unwrap_or(self.everywhere)
        }
    }

    /// Whether any message can be lost.
    pub fn any(&self) -> bool {
        !self.everywhere.is_never() || !self.links.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recovery_must_follow_a_crash_of_its_process() {
        let at = |s: &str| s.parse::<NodeAt>().unwrap();
        assert!(check_recoveries(&[at("2@5")], &[at("2@10")], &[]).is_ok());
        assert_eq!(check_recoveries(&[at("2@10")], &[at("2@5")], &[]), Err(at("2@5")));
        assert!(check_recoveries(&[at("3@1")], &[at("2@5")], &[]).is_err(), "another process's crash");
        assert!(check_recoveries(&[at("2@1")], &[at("2@5"), at("2@9")], &[]).is_err(), "two recoveries, one crash");
        assert!(check_recoveries(&[at("2@1"), at("2@6")], &[at("2@5"), at("2@9")], &[]).is_ok());
        assert!(check_recoveries(&[], &[at("2@5")], &[0]).is_ok(), "whoever led at 0 may be process 2");
        assert!(check_recoveries(&[], &[at("2@5")], &[u64::MAX]).is_err(), "a leader crash after the recovery");
    }

    #[test]
    fn faults_print_back_to_what_they_parse_from() {
        for s in ["0.1", "0.000001", "1", "0"] {
            assert_eq!(s.parse::<Probability>().unwrap().to_string(), s);
        }
        for s in ["3@0", "3@2.5"] {
            assert_eq!(s.parse::<NodeAt>().unwrap().to_string(), s);
        }
        for s in ["1-3@0", "1>3@2..10", "2-4@1.5..3"] {
            assert_eq!(s.parse::<LinkDown>().unwrap().to_string(), s);
        }
        for s in ["1,2|3,4@5", "1,2>3@0..9", "1|2|3@1..2"] {
            assert_eq!(s.parse::<Partition>().unwrap().to_string(), s);
        }
        for s in ["0.25", "1-2:0.5", "1>2:1"] {
            assert_eq!(s.parse::<Loss>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn malformed_faults_name_the_problem() {
        assert!("1.5".parse::<Probability>().unwrap_err().to_string().contains("not between 0 and 1"));
        assert!("1=3@0".parse::<LinkDown>().unwrap_err().to_string().contains("not a link"));
        assert!("1-1@0".parse::<LinkDown>().unwrap_err().to_string().contains("to itself"));
        assert!("1-3@5..2".parse::<LinkDown>().unwrap_err().to_string().contains("ends before it starts"));
        assert!("1,2@0".parse::<Partition>().unwrap_err().to_string().contains("two or more groups"));
        assert!("1,2|2,3@0".parse::<Partition>().unwrap_err().to_string().contains("node 2 is in two groups"));
        assert!("1,2>3>4@0".parse::<Partition>().unwrap_err().to_string().contains("exactly two"));
        assert!("1-2:x".parse::<Loss>().unwrap_err().to_string().contains("'x' is not a probability"));
    }
}
