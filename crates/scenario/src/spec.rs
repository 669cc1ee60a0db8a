//! Why a value written for a flag (or for its key in a scenario file) does not parse: [`SpecError`], one variant
//! per problem, whose messages are those the command line prints. The values a user wrote are kept shortened
//! ([`crate::shorten`]).

use elect_core::NodeId;

use crate::time::TimeError;

/// The longest message delay a user may ask for, in units.
pub(crate) const MAX_DELAY_UNITS: u64 = 1_000_000;

/// A value of an id arrangement, initiators, delay, attributes, fault or mobility flag that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// What a value must look like, after the problem with it: `PROBLEM (expected ...)`.
    #[error("{error} (expected {expected})")]
    Expected {
        /// The problem.
        error: Box<Self>,
        /// The forms the value may take.
        expected: &'static str,
    },
    /// A value of a kind (`what`: `delay `, `link fault `, ... or nothing) that does not parse, and why.
    #[error("malformed {what}'{text}': {error}")]
    Malformed {
        /// What the value is, with a space after it.
        what: &'static str,
        /// The value.
        text: String,
        /// Why.
        error: Box<Self>,
    },
    /// A time that does not parse.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// A word that is not a node id.
    #[error("'{0}' is not a node id")]
    NotAnId(String),
    /// `neighbors:ID` without an id.
    #[error("neighbors:ID needs a node id")]
    NeighborsId,
    /// `random:K` without a count.
    #[error("random:K needs a count K")]
    RandomCount,
    /// `random:MAX` without a number.
    #[error("random:MAX needs a number")]
    RandomMax,
    /// Attributes that are not `ID=VALUE` pairs.
    #[error("expected ID=VALUE,... or random:MAX")]
    AttrPairs,
    /// A node given two attributes.
    #[error("node {0} has two attributes")]
    TwoAttrs(u32),
    /// A delay below one tick.
    #[error("delay '{0}' must be at least 0.001, the simulator's time resolution")]
    ShortDelay(String),
    /// A delay beyond the longest one.
    #[error("delay '{0}' must be at most {MAX_DELAY_UNITS} time units")]
    LongDelay(String),
    /// `uniform:` without a range.
    #[error("expected uniform:A..B")]
    UniformRange,
    /// `uniform:A..B` with `A > B`.
    #[error("the range is empty")]
    EmptyRange,
    /// A probability that is not a number.
    #[error("'{0}' is not a probability")]
    NotAProbability(String),
    /// A probability out of `[0, 1]`.
    #[error("probability '{0}' is not between 0 and 1")]
    ProbabilityRange(String),
    /// `ID@TIME` without its `@`.
    #[error("expected ID@TIME")]
    NodeAt,
    /// A transfer that is not `FROM>TO@TIME`.
    #[error("expected FROM>TO@TIME")]
    Transfer,
    /// A transfer from a process to itself.
    #[error("a transfer hands leadership from one process to another")]
    SelfTransfer,
    /// A window that ends before it starts.
    #[error("the window {0} ends before it starts")]
    EmptyWindow(String),
    /// A link that is neither `A-B` nor `A>B`.
    #[error("'{0}' is not a link: expected A-B (both ways) or A>B (one way)")]
    NotALink(String),
    /// A link from a process to itself.
    #[error("'{0}' links a process to itself")]
    SelfLink(String),
    /// A link fault without its `@`.
    #[error("expected A-B@T or A>B@T..U")]
    LinkFault,
    /// A partition without its `@`.
    #[error("expected GROUP|GROUP@T")]
    PartitionTime,
    /// A partition of fewer than two groups, or a one-way one of more.
    #[error("expected two or more groups separated by | (or exactly two by >)")]
    PartitionGroups,
    /// A node in two groups of a partition.
    #[error("node {0} is in two groups")]
    TwoGroups(NodeId),
    /// A mobility model other than the random waypoint.
    #[error("unknown mobility model '{0}': use waypoint:SPEED or waypoint:SPEED:PAUSE (random waypoint)")]
    MobilityModel(String),
    /// A waypoint speed that is not a number.
    #[error("waypoint:SPEED needs a speed (distance per time unit), not '{0}'")]
    NoSpeed(String),
    /// A waypoint speed out of `(0, 1]` (as the number it parsed to prints).
    #[error("the waypoint speed must be in (0, 1] (the unit square per time unit), not {0}")]
    SpeedRange(String),
}

impl SpecError {
    /// `error`, in a value of kind `what` (`"delay "`, `"link fault "`, or `""`) written as `text`.
    pub(crate) fn malformed(what: &'static str, text: &str, error: impl Into<Self>) -> Self {
        Self::Malformed { what, text: crate::shorten(text).into_owned(), error: Box::new(error.into()) }
    }

    /// `self`, followed by the forms the value may take.
    pub(crate) fn expected(self, expected: &'static str) -> Self {
        Self::Expected { error: Box::new(self), expected }
    }
}
