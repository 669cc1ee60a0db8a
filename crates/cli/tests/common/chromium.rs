//! Headless Chromium for the browser tests: which binary, and the flags that keep it from reaching anything but
//! the page it is given.

use std::path::PathBuf;

/// The Chromium binary: `ELECT_CHROMIUM`, or Debian's. Missing, the test fails (never skips).
pub(crate) fn chromium() -> PathBuf {
    let path = std::env::var_os("ELECT_CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        path.exists(),
        "{} is missing: the browser test needs Chromium; run scripts/install-chromium (scripts/test does)",
        path.display()
    );
    path
}

/// Headless, with every background connection off.
pub(crate) const HEADLESS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];
