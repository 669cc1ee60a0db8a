//! What the "always" properties of a search read of a state, which a timed run's reduction keeps visible.

use elect_core::{Check, Property, When};

/// What the "always" properties read of the statuses, but for P-Unique and fresh-epoch (judged on the
/// declarations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Reads {
    /// Nothing.
    Nothing,
    /// Which live processes say they lead: one-leader, whose verdict depends on nothing else (its epochs only
    /// describe a violation).
    Leading,
    /// The statuses.
    Statuses,
}

impl Reads {
    pub(super) fn of(checks: &[Check]) -> Self {
        let reads = |c: &Check| match c.property {
            _ if c.when != When::Always => Self::Nothing,
            Property::Uniqueness | Property::FreshEpoch => Self::Nothing,
            Property::OneLeader => Self::Leading,
            _ => Self::Statuses,
        };
        checks.iter().map(reads).max().unwrap_or(Self::Nothing)
    }
}
