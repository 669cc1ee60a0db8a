//! What the browser tests of `elect serve`'s page share: screenshots, reading the page, waiting for a run.

use std::path::PathBuf;

use crate::cdp::Browser;

/// Where screenshots go: `ELECT_SCREENSHOTS`, or the test's scratch directory.
pub(crate) fn shots() -> PathBuf {
    std::env::var_os("ELECT_SCREENSHOTS").map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from)
}

/// A screenshot of the page as it shows now, saved as `name` under [`shots`].
pub(crate) fn shoot(browser: &mut Browser, name: &str) {
    let png = browser.screenshot();
    assert!(png.len() > 10_000 && png.starts_with(b"\x89PNG"), "a screenshot of {name}");
    std::fs::write(shots().join(name), png).unwrap();
}

/// The value of `expression` as text (a string as it is, anything else as JSON).
pub(crate) fn text(browser: &mut Browser, expression: &str) -> String {
    let value = browser.eval(expression);
    value.as_str().map_or_else(|| value.to_string(), str::to_owned)
}

/// Waits for view `view`'s run to end, and returns its status line (failing on an error).
pub(crate) fn finished(browser: &mut Browser, view: &str) -> String {
    browser.wait(&format!("['done', 'error'].includes(document.getElementById('status-{view}').dataset.state)"));
    let status = text(browser, &format!("document.getElementById('status-{view}').textContent"));
    let state = text(browser, &format!("document.getElementById('status-{view}').dataset.state"));
    assert_eq!(state, "done", "{view}: {status}");
    status
}
