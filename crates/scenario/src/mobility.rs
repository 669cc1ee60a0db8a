//! How the nodes of a geometric graph move (`--mobility waypoint:SPEED[:PAUSE]`): the random-waypoint model. The
//! simulator moves them (`crates/sim/src/mobility.rs`).

use std::fmt;
use std::str::FromStr;

use crate::spec::SpecError;
use crate::time::{format_time, parse_time};

/// How nodes move, as `--mobility waypoint:SPEED[:PAUSE]` writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MobilitySpec {
    /// Distance per time unit, in the unit square.
    pub speed: f64,
    /// Ticks a node waits at each destination.
    pub pause: u64,
}

impl Eq for MobilitySpec {}

impl FromStr for MobilitySpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let rest = s
            .trim()
            .strip_prefix("waypoint:")
            .ok_or_else(|| SpecError::MobilityModel(crate::shorten(s).into_owned()))?;
        let (speed, pause) = rest.split_once(':').unwrap_or((rest, "0"));
        let speed: f64 = speed.trim().parse().map_err(|_| SpecError::NoSpeed(crate::shorten(speed).into_owned()))?;
        if !(speed > 0.0 && speed <= 1.0) {
            return Err(SpecError::SpeedRange(speed.to_string()));
        }
        Ok(Self { speed, pause: parse_time(pause)? })
    }
}

impl fmt::Display for MobilitySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "waypoint:{}", self.speed)?;
        if self.pause > 0 {
            write!(f, ":{}", format_time(self.pause))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print_back() {
        for s in ["waypoint:0.01", "waypoint:0.5:2"] {
            assert_eq!(s.parse::<MobilitySpec>().unwrap().to_string(), s);
        }
        let err = |s: &str| s.parse::<MobilitySpec>().unwrap_err().to_string();
        assert!(err("brownian").contains("unknown mobility model"));
        assert!(err("waypoint:3").contains("(0, 1]"));
        assert!(err("waypoint:x").contains("needs a speed"));
    }
}
