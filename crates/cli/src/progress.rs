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
