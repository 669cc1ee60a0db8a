//! The rules each algorithm names as it applies them ([`elect_core::Cx::rule`]), in the words of its chapter of the
//! book: one source for the label a step carries and the sentence a viewer shows beside it.
//!
//! Every chapter that describes a process states its rules in a section "Rules, step by step", one bullet per rule:
//!
//! ```markdown
//! ## Rules, step by step
//!
//! - **forward a stronger token**: An initiator that receives a token stronger than its own passes it on, and
//!   stops competing.
//! ```
//!
//! The chapters are compiled in, so that a viewer needs no files; a test holds every algorithm's
//! [`Info::rules`](crate::Info::rules) and its chapter to the same list.

/// Each algorithm's chapter, by canonical name, with its path in the book.
const ALGORITHMS: &[(&str, &str, &str)] = &[
    ("bully", "reference/algorithms/bully.md", include_str!("../../../docs/reference/algorithms/bully.md")),
    (
        "garcia-molina",
        "reference/algorithms/garcia-molina.md",
        include_str!("../../../docs/reference/algorithms/garcia-molina.md"),
    ),
    ("lelann", "reference/algorithms/lelann.md", include_str!("../../../docs/reference/algorithms/lelann.md")),
    (
        "chang-roberts",
        "reference/algorithms/chang-roberts.md",
        include_str!("../../../docs/reference/algorithms/chang-roberts.md"),
    ),
    (
        "ring-participant",
        "reference/algorithms/ring-participant.md",
        include_str!("../../../docs/reference/algorithms/ring-participant.md"),
    ),
    (
        "hirschberg-sinclair",
        "reference/algorithms/hirschberg-sinclair.md",
        include_str!("../../../docs/reference/algorithms/hirschberg-sinclair.md"),
    ),
    ("franklin", "reference/algorithms/franklin.md", include_str!("../../../docs/reference/algorithms/franklin.md")),
    ("peterson", "reference/algorithms/peterson.md", include_str!("../../../docs/reference/algorithms/peterson.md")),
    (
        "invitation",
        "reference/algorithms/invitation.md",
        include_str!("../../../docs/reference/algorithms/invitation.md"),
    ),
    ("floodmax", "reference/algorithms/floodmax.md", include_str!("../../../docs/reference/algorithms/floodmax.md")),
    (
        "opt-floodmax",
        "reference/algorithms/opt-floodmax.md",
        include_str!("../../../docs/reference/algorithms/opt-floodmax.md"),
    ),
    ("sync-lcr", "reference/algorithms/sync-lcr.md", include_str!("../../../docs/reference/algorithms/sync-lcr.md")),
    ("ad-hoc", "reference/algorithms/ad-hoc.md", include_str!("../../../docs/reference/algorithms/ad-hoc.md")),
    (
        "timestamp-flooding",
        "reference/algorithms/timestamp-flooding.md",
        include_str!("../../../docs/reference/algorithms/timestamp-flooding.md"),
    ),
];

/// The chapters of what runs around an algorithm (the leader monitor, the member, rounds and the synchronizers),
/// whose rules any algorithm's run may name.
const AROUND: &[(&str, &str)] = &[
    ("internals/monitor.md", include_str!("../../../docs/internals/monitor.md")),
    ("internals/member.md", include_str!("../../../docs/internals/member.md")),
    ("reference/rounds.md", include_str!("../../../docs/reference/rounds.md")),
    ("reference/synchronizers/index.md", include_str!("../../../docs/reference/synchronizers/index.md")),
    ("reference/synchronizers/abd.md", include_str!("../../../docs/reference/synchronizers/abd.md")),
    ("reference/synchronizers/alpha.md", include_str!("../../../docs/reference/synchronizers/alpha.md")),
    ("reference/synchronizers/beta-gamma.md", include_str!("../../../docs/reference/synchronizers/beta-gamma.md")),
];

/// The heading of the section that lists a chapter's rules.
pub const SECTION: &str = "## Rules, step by step";

/// One rule as a chapter states it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Rule {
    /// The label a step carries.
    pub rule: String,
    /// The sentence that states it.
    pub text: String,
    /// The chapter, as a path in the book (`reference/algorithms/bully.md`).
    pub chapter: &'static str,
}

/// The rules listed in `chapter`'s section [`SECTION`], in order: each bullet `- **label**: text`, its text joined
/// across the lines that continue it.
pub fn rules_in(chapter: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut inside = false;
    for line in chapter.lines() {
        if line.starts_with("## ") {
            inside = line.trim_end() == SECTION;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(rest) = line.strip_prefix("- **")
            && let Some((label, text)) = rest.split_once("**:")
        {
            out.push((label.to_owned(), text.trim().to_owned()));
        } else if line.starts_with("  ")
            && let Some((_, text)) = out.last_mut()
        {
            text.push(' ');
            text.push_str(line.trim());
        }
    }
    out
}

/// Every rule a run of the algorithm named `algorithm` (canonical) may name: its own, then those of what runs
/// around it. Empty for a name that is not an algorithm's.
pub fn rules(algorithm: &str) -> Vec<Rule> {
    // A program names its rules and states none: the names are all there is.
    if crate::program::is_program(algorithm) {
        let rules = crate::lookup(algorithm).map(|info| info.rules).unwrap_or_default();
        return rules.iter().map(|r| Rule { rule: (*r).to_owned(), text: String::new(), chapter: "" }).collect();
    }
    let Some(&(_, path, chapter)) = ALGORITHMS.iter().find(|(name, ..)| *name == algorithm) else {
        return Vec::new();
    };
    std::iter::once((path, chapter))
        .chain(AROUND.iter().copied())
        .flat_map(|(path, chapter)| {
            rules_in(chapter).into_iter().map(move |(rule, text)| Rule { rule, text, chapter: path })
        })
        .collect()
}

/// The rules the algorithm named `algorithm`'s own chapter lists (not those of what runs around it), and the
/// chapter's path; `None` for a name that is not an algorithm's.
pub fn own_rules(algorithm: &str) -> Option<(&'static str, Vec<(String, String)>)> {
    ALGORITHMS.iter().find(|(name, ..)| *name == algorithm).map(|&(_, path, chapter)| (path, rules_in(chapter)))
}

/// The chapters around every algorithm, each with the rules it lists.
pub fn around() -> impl Iterator<Item = (&'static str, Vec<(String, String)>)> {
    AROUND.iter().map(|&(path, chapter)| (path, rules_in(chapter)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chapter_lists_its_rules_as_bullets_under_its_section() {
        let chapter = "# X\n\n## Rules, step by step\n\nIntro.\n\n- **send own token**: An initiator\n  sends it.\n\
                       - **swallow**: Dies here.\n\n## Sources\n\n- **not a rule**: no.\n";
        assert_eq!(
            rules_in(chapter),
            [
                ("send own token".to_owned(), "An initiator sends it.".to_owned()),
                ("swallow".to_owned(), "Dies here.".to_owned()),
            ]
        );
    }

    #[test]
    fn the_monitor_s_rules_are_in_its_chapter() {
        let listed: Vec<String> = rules("bully").into_iter().map(|r| r.rule).collect();
        for rule in crate::monitor::rule::ALL.iter().chain(crate::member::rule::ALL) {
            assert!(listed.iter().any(|l| l == rule), "{rule} is not in the book");
        }
        assert!(rules("no-such-algorithm").is_empty());
    }
}
