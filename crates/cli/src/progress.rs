//! Progress on standard error for long runs; invisible when standard error is not a terminal.

use std::time::Duration;

use elect_sim::{Progress, ProgressFn};
use indicatif::{ProgressBar, ProgressStyle};

/// A spinner that stays hidden until the first progress report (short runs never show it).
pub(crate) fn spinner() -> ProgressBar {
    let bar = ProgressBar::hidden();
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("a valid template"));
    bar
}

/// A progress callback that shows the run's counters on `bar`.
pub(crate) fn reporter(bar: &ProgressBar) -> ProgressFn {
    let bar = bar.clone();
    let mut shown = false;
    Box::new(move |p: &Progress| {
        if !shown {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(200));
            shown = true;
        }
        bar.set_message(format!("{} events, {} messages, t={}, {} queued", p.events, p.messages, p.time, p.queued));
    })
}

/// A progress callback for the model checker: shown on `bar` once a search has run for a second, with its states,
/// transitions, depth and the states waiting.
pub(crate) fn searching(bar: &ProgressBar) -> elect_check::OnProgress {
    let bar = bar.clone();
    let shown = std::sync::atomic::AtomicBool::new(false);
    elect_check::OnProgress(std::sync::Arc::new(move |p: &elect_check::Searching| {
        if p.seconds < 1.0 {
            return;
        }
        if !shown.swap(true, std::sync::atomic::Ordering::Relaxed) {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        bar.set_message(format!(
            "{} states, {} transitions, depth {}, {} waiting",
            p.states, p.transitions, p.depth, p.waiting
        ));
    }))
}
