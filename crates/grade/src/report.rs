//! A grading report: each case passed or failed, with the seed, the command that replays it, and the checker's
//! shortest counterexample; written as text for people, JSON for scripts, or JUnit XML for autograders.

use std::fmt::Write as _;

use serde::Serialize;

/// One case of an assignment.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    /// What the case ran: `simulate n=8, arrangement 3`, `check n=4, every interleaving, 0 crashes`.
    pub name: String,
    /// No problem was found.
    pub passed: bool,
    /// What went wrong, first problem first.
    pub problems: Vec<String>,
    /// What was seen (messages and leader, or states).
    pub seen: Vec<String>,
    /// The seed of its id arrangement.
    pub seed: u64,
    /// The command that replays it.
    pub command: String,
    /// From the checker: a shortest path to the violation, one step a line.
    pub counterexample: Vec<String>,
}

impl Case {
    /// A case that has passed so far.
    pub fn new(name: String, seed: u64, command: String) -> Self {
        Self { name, passed: true, problems: Vec::new(), seen: Vec::new(), seed, command, counterexample: Vec::new() }
    }

    /// Marks the case failed, for `problem`.
    pub fn fail(&mut self, problem: String) {
        self.passed = false;
        self.problems.push(problem);
    }

    /// Adds what was seen.
    pub fn note(&mut self, seen: String) {
        self.seen.push(seen);
    }
}

/// A grading's cases, with what was graded.
#[derive(Serialize)]
pub struct Report {
    /// The assignment's title.
    pub title: String,
    /// The program graded.
    pub program: String,
    /// What it was graded against.
    pub reference: String,
    /// How many cases the assignment has: more than ran when the program failed.
    pub planned: usize,
    /// Its cases, in the order they ran: simulated, then exhaustive.
    pub cases: Vec<Case>,
}

/// The longest counterexample a report shows in full; longer ones show their start and their end.
const SHOWN_STEPS: usize = 40;

impl Report {
    /// Every case passed, and the program did not fail.
    pub fn passed(&self) -> bool {
        self.cases.iter().all(|c| c.passed) && !self.stopped()
    }

    /// Whether the program failed, so that the cases after it were not run.
    fn stopped(&self) -> bool {
        elect_algos::program::first_failure().is_some()
    }

    fn passed_count(&self) -> usize {
        self.cases.iter().filter(|c| c.passed).count()
    }

    /// The report for people: a line a case, the problems, seeds and replay commands of those that failed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}\ngrading {} against {}\n", self.title, self.program, self.reference);
        for case in &self.cases {
            let mark = if case.passed { "pass" } else { "FAIL" };
            let _ = writeln!(out, "{mark}  {} ({})", case.name, case.seen.join("; "));
            if case.passed {
                continue;
            }
            for problem in &case.problems {
                for (i, line) in problem.lines().enumerate() {
                    let _ = writeln!(out, "      {}{line}", if i == 0 { "" } else { "  " });
                }
            }
            let _ = writeln!(out, "      seed {}; replay with: {}", case.seed, case.command);
            if !case.counterexample.is_empty() {
                let _ = writeln!(out, "      a shortest counterexample ({} steps):", case.counterexample.len());
                for line in shown(&case.counterexample) {
                    let _ = writeln!(out, "        {line}");
                }
            }
        }
        let _ = write!(out, "\npassed {} of {} cases", self.passed_count(), self.planned.max(self.cases.len()));
        if self.stopped() {
            let skipped = self.planned.saturating_sub(self.cases.len());
            let _ = write!(
                out,
                "; the program failed in case {}, so the {skipped} after it were not run",
                self.cases.len()
            );
        }
        out.push('\n');
        out
    }

    /// The report for scripts, as JSON.
    pub fn json(&self) -> String {
        let value = serde_json::json!({
            "title": self.title,
            "program": self.program,
            "reference": self.reference,
            "passed": self.passed(),
            "passed_cases": self.passed_count(),
            "planned_cases": self.planned,
            "cases": self.cases,
            "program_failed": elect_algos::program::first_failure().map(|f| f.to_string()),
        });
        format!("{value:#}\n")
    }

    /// JUnit XML: one test suite, one test case per case, a `<failure>` with the problems, the replay command and
    /// the counterexample.
    pub fn junit(&self) -> String {
        let failures = self.cases.len() - self.passed_count();
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ =
            writeln!(out, "<testsuites name=\"elect grade\" tests=\"{}\" failures=\"{failures}\">", self.cases.len());
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">",
            xml(&self.title),
            self.cases.len()
        );
        for case in &self.cases {
            let _ = write!(out, "    <testcase classname=\"{}\" name=\"{}\"", xml(&self.program), xml(&case.name));
            if case.passed {
                out.push_str("/>\n");
                continue;
            }
            let mut body = case.problems.join("\n");
            let _ = write!(body, "\nseed {}; replay with: {}", case.seed, case.command);
            if !case.counterexample.is_empty() {
                let _ = write!(body, "\na shortest counterexample:\n{}", shown(&case.counterexample).join("\n"));
            }
            let first = case.problems.first().map_or("", |p| p.lines().next().unwrap_or(""));
            let _ =
                write!(out, ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n", xml(first), xml(&body));
        }
        out.push_str("  </testsuite>\n</testsuites>\n");
        out
    }
}

/// The steps of a counterexample, its middle elided when it is long.
fn shown(steps: &[String]) -> Vec<String> {
    if steps.len() <= SHOWN_STEPS {
        return steps.iter().enumerate().map(|(i, s)| format!("{}. {s}", i + 1)).collect();
    }
    let half = SHOWN_STEPS / 2;
    let mut lines: Vec<String> = steps[..half].iter().enumerate().map(|(i, s)| format!("{}. {s}", i + 1)).collect();
    lines.push(format!("… {} steps …", steps.len() - 2 * half));
    let start = steps.len() - half;
    lines.extend(steps[start..].iter().enumerate().map(|(i, s)| format!("{}. {s}", start + i + 1)));
    lines
}

/// `text` as XML character data or an attribute value.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters XML 1.0 cannot carry.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
