//! Virtual time as users write it: a number of time units (one unit = the default message delay), kept as whole
//! ticks.

/// Virtual-time ticks per time unit (one unit = the default message delay). A tick is the `ε` of timeouts.
pub const TICKS_PER_UNIT: u64 = 1000;

/// The largest time a user may write, in units (keeps tick arithmetic far from overflow).
const MAX_UNITS: f64 = 1e12;

/// Parses a time in units (`2`, `0.5`, `1e3`) into ticks.
pub fn parse_time(s: &str) -> Result<u64, String> {
    let units: f64 =
        s.trim().parse().map_err(|_| format!("'{s}' is not a time (a number of time units)", s = crate::shorten(s)))?;
    if !(0.0..=MAX_UNITS).contains(&units) {
        return Err(format!("time '{s}' must be a number between 0 and {MAX_UNITS}", s = crate::shorten(s)));
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
        assert!(parse_time("soon").unwrap_err().contains("'soon' is not a time"));
    }
}
