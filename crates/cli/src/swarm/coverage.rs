//! The merge's account of coverage as `elect merge` prints it: the distinct states the swarm covered and how large
//! the whole space is, in words ([`elect_check::swarm::SwarmCoverage`] holds the figures).

use std::io::Write;

use elect_check::swarm::SwarmCoverage;

/// Prints `c`'s lines, `covered` and `space`; `counted` is the states the searches counted, added up.
pub(super) fn print(c: &SwarmCoverage, out: &mut impl Write, counted: u64) -> std::io::Result<()> {
    let note = c.note.as_deref().unwrap_or("");
    let (Some(distinct), "complete" | "sample") = (c.distinct, c.method) else {
        return writeln!(out, "covered     unknown: {note}");
    };
    let over = if distinct > 0 { format!(", {:.1} times over", counted as f64 / distinct as f64) } else { "".into() };
    if c.method == "complete" {
        let by = c.complete_search.unwrap_or(0);
        writeln!(out, "covered     all {distinct} reachable states ({counted} counted over all searches{over})")?;
        return writeln!(out, "space       {distinct} states, 100% covered (search {by} explored every one)");
    }
    let (s, sampled) = (c.exponent.unwrap_or(0), c.sampled.unwrap_or(0));
    if c.exact {
        writeln!(out, "covered     {distinct} distinct states ({counted} counted over all searches{over})")?;
    } else {
        writeln!(
            out,
            "covered     about {} distinct states ({counted} counted over all searches; from {sampled} sampled, \
                 1 in {})",
            about(distinct as f64),
            about(f64::from(s).exp2())
        )?;
    }
    match (c.space, c.percent) {
        (Some(space), Some(percent)) => writeln!(
            out,
            "space       at least about {} states (Chao2, from the {sampled} sampled: {} seen by one search, {} by \
                 two): at most about {} covered",
            about(space as f64),
            c.seen_once.unwrap_or(0),
            c.seen_twice.unwrap_or(0),
            percentage(percent)
        ),
        _ => writeln!(out, "space       unknown: {note}"),
    }
}

/// `x` to three significant figures, in words past ten thousand: `48.3 million`.
fn about(x: f64) -> String {
    let (scaled, word) = match x {
        x if x >= 1e9 => (x / 1e9, " billion"),
        x if x >= 1e6 => (x / 1e6, " million"),
        x if x >= 1e4 => (x / 1e3, " thousand"),
        x => return format!("{x:.0}"),
    };
    let decimals = if scaled >= 100.0 {
        0
    } else if scaled >= 10.0 {
        1
    } else {
        2
    };
    format!("{scaled:.decimals$}{word}")
}

/// A percentage to two significant figures at most: `31%`, `4.2%`, `0.37%`.
fn percentage(p: f64) -> String {
    let decimals = if p >= 10.0 {
        0
    } else if p >= 1.0 {
        1
    } else {
        2
    };
    format!("{p:.decimals$}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_as_words() {
        assert_eq!(about(9999.4), "9999");
        assert_eq!(about(48_300_000.0), "48.3 million");
        assert_eq!(about(123_456.0), "123 thousand");
        assert_eq!(about(1.234e9), "1.23 billion");
        assert_eq!(percentage(31.2), "31%");
        assert_eq!(percentage(4.23), "4.2%");
        assert_eq!(percentage(0.371), "0.37%");
    }
}
