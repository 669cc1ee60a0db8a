//! Every preset the book's lectures name (`> **Preset:** `NAME``, in `docs/lectures/`) is in the page's header menu,
//! and, chosen there at 1024×768, runs and opens in the viewer: a lecture's "one click" is one click.
//!
//! Like `serve_browser`, `#[ignore]`d under a plain `cargo test` and run by `scripts/test` with `--ignored` (Chromium
//! from `scripts/install-chromium`); it fails, never skips, when Chromium is missing.

#[path = "common/cdp.rs"]
mod cdp;
#[path = "common/chromium.rs"]
mod chromium;
#[path = "common/page.rs"]
mod page;
#[path = "common/server.rs"]
mod server;

use std::path::Path;

use cdp::Browser;
use page::{finished, shoot, text, viewport};
use server::Server;

/// The presets the lectures name, with the chapter that names each, in the chapters' order.
fn lecture_presets() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/lectures");
    let mut chapters: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    chapters.sort();
    let mut out = Vec::new();
    for chapter in chapters.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let name = chapter.file_name().unwrap().to_string_lossy().into_owned();
        for line in std::fs::read_to_string(chapter).unwrap().lines() {
            if let Some(rest) = line.trim_start_matches('>').trim().strip_prefix("**Preset:** `") {
                let preset = rest.split('`').next().unwrap().to_owned();
                if !out.iter().any(|(p, _)| *p == preset) {
                    out.push((preset, name.clone()));
                }
            }
        }
    }
    out
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn every_preset_a_lecture_names_runs_from_the_page_s_menu() {
    let presets = lecture_presets();
    assert!(presets.len() >= 10, "the lectures name their presets: {presets:?}");
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/#view=sim"));
    viewport(&mut browser, 1024, 768);
    browser.wait("document.getElementById('presets').options.length > 10");
    for (preset, chapter) in &presets {
        let chosen = browser.eval(&format!(
            "(() => {{ const s = document.getElementById('presets');
               const o = [...s.options].find((o) => o.textContent.startsWith({name:?} + ': '));
               if (!o) return false;
               document.getElementById('status-sim').dataset.state = '';
               s.value = o.value; s.dispatchEvent(new Event('change')); return true; }})()",
            name = preset
        ));
        assert_eq!(chosen, serde_json::Value::Bool(true), "{chapter}: the header's menu has no preset {preset}");
        let status = finished(&mut browser, "sim");
        let frame = "document.getElementById('viewer-sim').contentDocument";
        browser.wait(&format!("{frame} && {frame}.getElementById('topology') && +{frame}.body.dataset.events > 0"));
        let command = text(&mut browser, "document.getElementById('command-sim').textContent");
        assert!(command.starts_with("elect sim "), "{chapter}, {preset}: {command}");
        assert!(status.starts_with("done"), "{chapter}, {preset}: {status}");
        if preset == "bully-figure" {
            shoot(&mut browser, "lecture-preset-bully-figure.png");
        }
    }
}
