//! Virtual time. Nothing here reads a clock: drivers pass `now` in with every input.
//!
//! Time is counted in integer *ticks*. What a tick is belongs to the driver: the simulator uses a thousandth of a
//! message-delay unit (so `T + ε` is representable with `ε` = one tick), the network runtime a microsecond.
//! Algorithms only ever express durations as multiples of the delay bound `T` they are given, plus [`Duration::TICK`]
//! where a timeout must be strictly larger than the round trip it guards.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

use serde::{Deserialize, Serialize};

/// A point in virtual time, in ticks since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Instant(u64);

/// A span of virtual time, in ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Duration(u64);

/// A span of time counted in multiples of the delay bound `T` (a heartbeat period of `InT(2)` is `2T`): what a
/// flag, a parameter or a configuration says before a driver's `T` turns it into ticks (`t * InT(2)`). Its sums
/// saturate (they are of values a user chose, bounded where they enter); the product with `T` is checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InT(pub u64);

impl Instant {
    /// The start of every run.
    pub const ZERO: Self = Self(0);

    /// The instant `ticks` after the start.
    pub const fn from_ticks(ticks: u64) -> Self {
        Self(ticks)
    }

    /// Ticks since the start.
    pub const fn ticks(self) -> u64 {
        self.0
    }

    /// The instant `d` later, or `None` if it is past the end of virtual time. For sums that involve values a user
    /// chose; `+` panics on overflow, which internal arithmetic never reaches.
    pub const fn checked_add(self, d: Duration) -> Option<Self> {
        match self.0.checked_add(d.0) {
            Some(t) => Some(Self(t)),
            None => None,
        }
    }

    /// The time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Self) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// No time.
    pub const ZERO: Self = Self(0);
    /// The smallest positive duration: the `ε` of "strictly longer than the round trip".
    pub const TICK: Self = Self(1);

    /// A duration of `ticks` ticks.
    pub const fn from_ticks(ticks: u64) -> Self {
        Self(ticks)
    }

    /// Its length in ticks.
    pub const fn ticks(self) -> u64 {
        self.0
    }

    /// `k` times this duration, or `None` if that does not fit in virtual time. For products that involve values a
    /// user chose (a period of `k·T`); `*` panics on overflow, which internal arithmetic never reaches.
    pub const fn checked_mul(self, k: u64) -> Option<Self> {
        match self.0.checked_mul(k) {
            Some(t) => Some(Self(t)),
            None => None,
        }
    }

    /// The sum, or `None` if it does not fit in virtual time (see [`Duration::checked_mul`]).
    pub const fn checked_add(self, d: Self) -> Option<Self> {
        match self.0.checked_add(d.0) {
            Some(t) => Some(Self(t)),
            None => None,
        }
    }
}

impl Add<Duration> for Instant {
    type Output = Self;
    fn add(self, d: Duration) -> Self {
        Self(self.0.checked_add(d.0).expect("virtual time overflow"))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for Instant {
    type Output = Duration;
    fn sub(self, earlier: Self) -> Duration {
        Duration(self.0.checked_sub(earlier.0).expect("instant subtracted from an earlier one"))
    }
}

impl Add for Duration {
    type Output = Self;
    fn add(self, d: Self) -> Self {
        Self(self.0.checked_add(d.0).expect("duration overflow"))
    }
}

impl Mul<u64> for Duration {
    type Output = Self;
    fn mul(self, k: u64) -> Self {
        Self(self.0.checked_mul(k).expect("duration overflow"))
    }
}

impl InT {
    /// No time.
    pub const ZERO: Self = Self(0);

    /// How many `T`.
    pub const fn count(self) -> u64 {
        self.0
    }

    /// This many `T` of `t` ticks, or `None` if that does not fit in virtual time.
    pub const fn of(self, t: Duration) -> Option<Duration> {
        t.checked_mul(self.0)
    }
}

impl Add for InT {
    type Output = Self;
    fn add(self, k: Self) -> Self {
        Self(self.0.saturating_add(k.0))
    }
}

impl Add<u64> for InT {
    type Output = Self;
    fn add(self, k: u64) -> Self {
        Self(self.0.saturating_add(k))
    }
}

impl Mul<u64> for InT {
    type Output = Self;
    fn mul(self, k: u64) -> Self {
        Self(self.0.saturating_mul(k))
    }
}

impl Mul<InT> for Duration {
    type Output = Self;
    /// `k·T` in ticks, for a `T` of `self` ticks.
    fn mul(self, k: InT) -> Self {
        self * k.0
    }
}

impl std::str::FromStr for InT {
    type Err = std::num::ParseIntError;
    /// A number of `T`, as a flag gives it (`2` is `2T`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim().parse().map(Self)
    }
}

impl fmt::Display for InT {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}T", self.0)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}t", self.0)
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}t", self.0)
    }
}

/// How long a timer runs: the driver picks a duration in `min..=max` (from its seeded generator in the simulator,
/// from a logged one in the runtime), so an algorithm can ask for a randomized timeout without holding an RNG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// The shortest duration the driver may pick.
    pub min: Duration,
    /// The longest duration the driver may pick.
    pub max: Duration,
}

impl Span {
    /// Exactly `d`, no jitter.
    pub const fn exactly(d: Duration) -> Self {
        Self { min: d, max: d }
    }

    /// Anything in `min..=max`.
    ///
    /// # Panics
    /// If `min > max`.
    pub fn between(min: Duration, max: Duration) -> Self {
        assert!(min <= max, "empty timer span {min}..={max}");
        Self { min, max }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_is_in_ticks() {
        let t = Duration::from_ticks(1000);
        let deadline = Instant::ZERO + t * 2 + Duration::TICK;
        assert_eq!(deadline.ticks(), 2001);
        assert_eq!(deadline - Instant::from_ticks(1), Duration::from_ticks(2000));
        assert_eq!(Instant::from_ticks(3).saturating_since(Instant::from_ticks(9)), Duration::ZERO);
    }

    #[test]
    fn multiples_of_t_become_ticks_with_t() {
        let t = Duration::from_ticks(1000);
        assert_eq!(t * (InT(2) + 1), Duration::from_ticks(3000));
        assert_eq!(InT(u64::MAX) + 1, InT(u64::MAX), "sums of T saturate");
        assert_eq!(InT(u64::MAX).of(t), None, "the product with T is checked");
        assert_eq!("3".parse::<InT>().unwrap().to_string(), "3T");
        assert!("-1".parse::<InT>().is_err());
    }

    #[test]
    fn checked_arithmetic_says_when_time_overflows() {
        let t = Duration::from_ticks(1000);
        assert_eq!(t.checked_mul(3), Some(Duration::from_ticks(3000)));
        assert_eq!(t.checked_mul(u64::MAX), None);
        assert_eq!(t.checked_add(Duration::TICK), Some(Duration::from_ticks(1001)));
        assert_eq!(Duration::from_ticks(u64::MAX).checked_add(Duration::TICK), None);
        assert_eq!(Instant::from_ticks(5).checked_add(t), Some(Instant::from_ticks(1005)));
        assert_eq!(Instant::from_ticks(u64::MAX).checked_add(Duration::TICK), None);
    }

    #[test]
    #[should_panic(expected = "empty timer span")]
    fn an_empty_span_is_a_programming_error() {
        let _ = Span::between(Duration::from_ticks(2), Duration::from_ticks(1));
    }
}
