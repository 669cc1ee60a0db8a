//! What the browser tests of `elect serve`'s page share: screenshots, reading the page, waiting for a run.
// Each test file uses the helpers it needs.
#![allow(dead_code)]

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

/// Sets the window's size to `width`×`height` pixels, as a smaller screen or a projector would have it.
pub(crate) fn viewport(browser: &mut Browser, width: u32, height: u32) {
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        serde_json::json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
    );
    browser.wait(&format!("window.innerWidth === {width}"));
}

/// At 1024×768: the page fits the width (no horizontal scrollbar), and a screenshot of `element` scrolled into view
/// is saved as `name`; then back to 1400×900.
pub(crate) fn shoot_at_1024(browser: &mut Browser, element: &str, name: &str) {
    viewport(browser, 1024, 768);
    let fits = browser.eval("document.documentElement.scrollWidth <= window.innerWidth");
    assert_eq!(fits, serde_json::Value::Bool(true), "{name}: no horizontal scrollbar at 1024×768");
    browser.eval(&format!("document.getElementById('{element}').scrollIntoView()"));
    shoot(browser, name);
    viewport(browser, 1400, 900);
    browser.eval("window.scrollTo(0, 0)");
}
