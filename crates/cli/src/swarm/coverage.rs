//! The merge's account of coverage: how many distinct states a swarm's searches covered, and how large the whole
//! space is, from the coordinated samples of their result files ([`elect_check::coverage`]), or exactly when a
//! search completed.

use std::io::Write;

use serde::Serialize;

use super::file::SwarmFile;

/// How much of the state space a swarm covered, as `elect merge` prints it and its JSON holds it.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    /// How the figures were found: `complete` (a search explored every reachable state: the space is its
    /// states, every one covered), `sample` (estimated from the searches' samples) or `unknown` (`note` says why).
    method: &'static str,
    /// Distinct states covered: exact with `complete`, or with `sample` when `exact` is true; estimated otherwise.
    distinct: Option<u64>,
    /// `distinct` is exact.
    exact: bool,
    /// The reachable states: exact with `complete`; with `sample`, the Chao2 estimate, which is a floor.
    space: Option<u64>,
    /// The percentage of `space` covered: 100 with `complete`; with `sample`, a ceiling.
    percent: Option<f64>,
    /// The sample's exponent `s` (1 state in `2ˢ` sampled), the sampled states the searches saw, and how many of
    /// them exactly one search saw and exactly two did.
    exponent: Option<u32>,
    sampled: Option<u64>,
    seen_once: Option<u64>,
    seen_twice: Option<u64>,
    /// Which search completed, with `complete`.
    complete_search: Option<u64>,
    /// Why the space is unknown, or a caution.
    note: Option<String>,
}

impl Report {
    fn unknown(note: String) -> Self {
        Self {
            method: "unknown",
            distinct: None,
            exact: false,
            space: None,
            percent: None,
            exponent: None,
            sampled: None,
            seen_once: None,
            seen_twice: None,
            complete_search: None,
            note: Some(note),
        }
    }

    /// Prints the report's lines, `covered` and `space`; `counted` is the states the searches counted, added up.
    pub(super) fn print(&self, out: &mut impl Write, counted: u64) -> std::io::Result<()> {
        let note = self.note.as_deref().unwrap_or("");
        let (Some(distinct), "complete" | "sample") = (self.distinct, self.method) else {
            return writeln!(out, "covered     unknown: {note}");
        };
        let over =
            if distinct > 0 { format!(", {:.1} times over", counted as f64 / distinct as f64) } else { "".into() };
        if self.method == "complete" {
            let by = self.complete_search.unwrap_or(0);
            writeln!(out, "covered     all {distinct} reachable states ({counted} counted over all searches{over})")?;
            return writeln!(out, "space       {distinct} states, 100% covered (search {by} explored every one)");
        }
        let (s, sampled) = (self.exponent.unwrap_or(0), self.sampled.unwrap_or(0));
        if self.exact {
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
        match (self.space, self.percent) {
            (Some(space), Some(percent)) => writeln!(
                out,
                "space       at least about {} states (Chao2, from the {sampled} sampled: {} seen by one search, {} by \
                 two): at most about {} covered",
                about(space as f64),
                self.seen_once.unwrap_or(0),
                self.seen_twice.unwrap_or(0),
                percentage(percent)
            ),
            _ => writeln!(out, "space       unknown: {note}"),
        }
    }
}

/// The coverage of the searches of `files`, the whole swarm in order of their index.
pub(super) fn report(files: &[SwarmFile]) -> Report {
    // A search that stopped at a violation is complete in that no bound stopped it, and did not see every state.
    if let Some(f) = files.iter().find(|f| f.complete && f.counterexample.is_none()) {
        return Report {
            method: "complete",
            distinct: Some(f.states),
            exact: true,
            space: Some(f.states),
            percent: Some(100.0),
            complete_search: Some(f.index),
            note: None,
            ..Report::unknown(String::new())
        };
    }
    let mut samples = Vec::with_capacity(files.len());
    for f in files {
        match &f.sample {
            Some(s) => samples.push(s),
            None => {
                return Report::unknown(format!("search {}'s file (version {}) has no sample", f.index, f.version));
            }
        }
    }
    if let Some(f) = files.iter().zip(&samples).find(|(_, s)| s.root != samples[0].root).map(|(f, _)| f) {
        return Report::unknown(format!(
            "search {} fingerprints states otherwise than search {} (another build of elect?)",
            f.index, files[0].index
        ));
    }
    let states: Vec<u64> = files.iter().map(|f| f.states).collect();
    let c = elect_check::coverage(&samples, &states);
    Report {
        method: "sample",
        distinct: Some(c.covered.round() as u64),
        exact: c.exact(),
        space: c.space.map(|s| s.round() as u64),
        percent: c.fraction().map(|f| f * 100.0),
        exponent: Some(c.exponent),
        sampled: Some(c.sampled),
        seen_once: Some(c.seen_once),
        seen_twice: Some(c.seen_twice),
        complete_search: None,
        note: c.space.is_none().then(|| "one search alone has no other to compare with".to_owned()),
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
