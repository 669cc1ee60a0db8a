//! Virtual time as users write it: a number of time units (one unit = the default message delay), kept as whole
//! ticks; and [`Time`], a virtual time as reports and traces show it.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// Virtual-time ticks per time unit (one unit = the default message delay). A tick is the `ε` of timeouts.
pub const TICKS_PER_UNIT: u64 = 1000;

/// The largest time a user may write, in units (keeps tick arithmetic far from overflow).
const MAX_UNITS: f64 = 1e12;

/// A time that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// Not a number.
    #[error("'{0}' is not a time (a number of time units)")]
    NotATime(String),
    /// Negative, or beyond the largest time a user may write.
    #[error("time '{0}' must be a number between 0 and {max}", max = MAX_UNITS)]
    OutOfRange(String),
}

/// Parses a time in units (`2`, `0.5`, `1e3`) into ticks.
pub fn parse_time(s: &str) -> Result<u64, TimeError> {
    let units: f64 = s.trim().parse().map_err(|_| TimeError::NotATime(crate::shorten(s).into_owned()))?;
    if !(0.0..=MAX_UNITS).contains(&units) {
        return Err(TimeError::OutOfRange(crate::shorten(s).into_owned()));
    }
    Ok((units * TICKS_PER_UNIT as f64).round() as u64)
}

/// Formats ticks as units, the way [`parse_time`] reads them back.
pub fn format_time(ticks: u64) -> String {
    let whole = ticks / TICKS_PER_UNIT;
    match ticks % TICKS_PER_UNIT {
        0 => whole.to_string(),
        frac => format!("{whole}.{frac:03}").trim_end_matches('0').to_owned(),
    }
}

/// A virtual time, shown in time units: an integer when whole (`16`), a decimal otherwise (`4.001`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    /// The time in ticks.
    pub fn ticks(self) -> u64 {
        self.0
    }

    /// The time in units, as a float.
    pub fn units(self) -> f64 {
        self.0 as f64 / TICKS_PER_UNIT as f64
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_time(self.0))
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 % TICKS_PER_UNIT == 0 {
            s.serialize_u64(self.0 / TICKS_PER_UNIT)
        } else {
            s.serialize_f64(self.units())
        }
    }
}

/// A number of time units, as [`Time`] serializes it, back to the nearest tick: a negative time, or one beyond
/// any tick count, is refused with `time T is not a time`.
impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Units;
        impl Visitor<'_> for Units {
            type Value = Time;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a time (a number of time units)")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Time, E> {
                v.checked_mul(TICKS_PER_UNIT).map(Time).ok_or_else(|| E::custom(format!("time {v} is not a time")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Time, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::custom(format!("time {v} is not a time"))),
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Time, E> {
                let ticks = (v * TICKS_PER_UNIT as f64).round();
                if ticks.is_finite() && (0.0..u64::MAX as f64).contains(&ticks) {
                    Ok(Time(ticks as u64))
                } else {
                    Err(E::custom(format!("time {v} is not a time")))
                }
            }
        }
        d.deserialize_any(Units)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_units_with_tick_resolution() {
        assert_eq!(parse_time("2").unwrap(), 2000);
        assert_eq!(parse_time("0.001").unwrap(), 1);
        assert_eq!(format_time(4001), "4.001");
        assert_eq!(format_time(2500), "2.5");
        assert_eq!(format_time(3000), "3");
        assert!(parse_time("-1").is_err());
        assert!(parse_time("soon").unwrap_err().to_string().contains("'soon' is not a time"));
    }

    #[test]
    fn times_read_back_what_they_write() {
        for ticks in [0, 1, 999, 1000, 4001, 123_456_789] {
            let text = serde_json::to_string(&Time(ticks)).unwrap();
            assert_eq!(serde_json::from_str::<Time>(&text).unwrap(), Time(ticks), "{text}");
        }
        assert!(serde_json::from_str::<Time>("-1").is_err());
        assert!(serde_json::from_str::<Time>("1e300").is_err());
    }
}
