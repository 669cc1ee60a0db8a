//! `elect serve`'s page in a real browser: headless Chromium, driven through the DevTools protocol, loads each
//! view, fills its form, runs it, steps the viewer, and in Explore clicks its way to untimed Bully's two
//! coordinators on three processes, where the uniqueness property turns red.
//!
//! Chromium comes from Debian's packages (`scripts/install-chromium`), so this test is `#[ignore]`d under a plain
//! `cargo test` and run by `scripts/test` with `--ignored`. Run alone: `scripts/install-chromium && cargo test -p
//! elect --test serve_browser -- --ignored`. It fails, never skips, when Chromium is missing. `ELECT_CHROMIUM`
//! names another Chromium binary; `ELECT_SCREENSHOTS=DIR` saves a screenshot of each view there (`scripts/gallery`
//! does, for the README).

#[path = "common/cdp.rs"]
mod cdp;
#[path = "common/chromium.rs"]
mod chromium;
#[path = "common/server.rs"]
mod server;

use std::path::PathBuf;

use cdp::Browser;
use serde_json::Value;
use server::Server;

/// Where screenshots go: `ELECT_SCREENSHOTS`, or the test's scratch directory.
fn shots() -> PathBuf {
    std::env::var_os("ELECT_SCREENSHOTS").map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from)
}

fn shoot(browser: &mut Browser, name: &str) {
    let png = browser.screenshot();
    assert!(png.len() > 10_000 && png.starts_with(b"\x89PNG"), "a screenshot of {name}");
    std::fs::write(shots().join(name), png).unwrap();
}

/// Sets the field `name` of form `form` to `value` (a tick for `true`), as typing would.
fn set(browser: &mut Browser, form: &str, name: &str, value: &str) {
    browser.eval(&format!(
        "(() => {{ const el = document.getElementById('form-{form}').elements['{name}'];
           if (el.type === 'checkbox') el.checked = {value:?} === 'true'; else el.value = {value:?};
           el.dispatchEvent(new Event('input', {{ bubbles: true }})); }})()"
    ));
}

fn text(browser: &mut Browser, expression: &str) -> String {
    browser.eval(expression).as_str().unwrap_or_default().to_owned()
}

/// Waits for view `view`'s run to end, and returns its status line (failing on an error).
fn finished(browser: &mut Browser, view: &str) -> String {
    browser.wait(&format!("['done', 'error'].includes(document.getElementById('status-{view}').dataset.state)"));
    let status = text(browser, &format!("document.getElementById('status-{view}').textContent"));
    let state = text(browser, &format!("document.getElementById('status-{view}').dataset.state"));
    assert_eq!(state, "done", "{view}: {status}");
    status
}

/// Clicks `selector` in the viewer in iframe `frame` `times` times, and returns the step it shows.
fn step_viewer(browser: &mut Browser, frame: &str, times: usize) -> u64 {
    let doc = format!("document.getElementById('{frame}').contentDocument");
    browser.wait(&format!("{doc} && {doc}.body && {doc}.body.dataset.step === '0'"));
    for _ in 0..times {
        browser.eval(&format!("{doc}.getElementById('forward').click()"));
    }
    text(browser, &format!("{doc}.body.dataset.step")).parse().unwrap()
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_page_runs_checks_explores_and_compares_in_chromium() {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/"));
    browser.wait("document.readyState === 'complete' && document.getElementById('limits').textContent !== ''");

    // Simulate: Chang-Roberts's worst case on 8; the report, the viewer stepped, the address and the command.
    set(&mut browser, "sim", "algorithm", "chang-roberts");
    set(&mut browser, "sim", "nodes", "8");
    set(&mut browser, "sim", "ids", "descending");
    browser.eval("document.getElementById('run-sim').click()");
    finished(&mut browser, "sim");
    assert_eq!(text(&mut browser, "document.getElementById('sim-leader').dataset.leader"), "8");
    assert!(text(&mut browser, "document.getElementById('sim-properties').textContent").contains("held"));
    assert_eq!(step_viewer(&mut browser, "viewer-sim", 12), 12, "the viewer steps");
    let command = text(&mut browser, "document.getElementById('command-sim').textContent");
    assert!(command.starts_with("elect sim --algorithm chang-roberts --nodes 8 --ids descending"), "{command}");
    let hash = text(&mut browser, "location.hash");
    assert!(hash.contains("view=sim") && hash.contains("ids=descending"), "{hash}");
    shoot(&mut browser, "serve-simulate.png");

    // The same address in a fresh page gives the same run, without a click.
    browser.navigate("about:blank");
    browser.navigate(&server.url(&format!("/{hash}")));
    browser.wait(
        "document.getElementById('status-sim') && document.getElementById('status-sim').dataset.state === 'done'",
    );
    assert_eq!(text(&mut browser, "document.getElementById('sim-leader').dataset.leader"), "8");

    // A link with faults, followed from the page: Bully with 5 down from the start elects 4.
    browser.eval("location.hash = '#view=sim&algorithm=bully&nodes=5&crash=5%400&seed=3'");
    browser.wait("document.getElementById('sim-leader').dataset.leader === '4'");
    assert_eq!(text(&mut browser, "document.getElementById('sim-leader').dataset.leader"), "4");

    // Check: untimed Bully on 3 breaks uniqueness; the counterexample opens in the viewer.
    browser.eval("document.getElementById('tab-check').click()");
    assert_eq!(text(&mut browser, "document.body.dataset.view"), "check");
    set(&mut browser, "check", "algorithm", "bully");
    set(&mut browser, "check", "nodes", "3");
    browser.eval("document.getElementById('run-check').click()");
    let status = finished(&mut browser, "check");
    assert!(status.contains("uniqueness"), "{status}");
    assert!(text(&mut browser, "document.getElementById('check-verdicts').textContent").contains("violated"));
    assert!(step_viewer(&mut browser, "viewer-check", 3) == 3, "the counterexample steps in the viewer");
    shoot(&mut browser, "serve-check.png");

    // Explore: untimed Bully on 3, clicked step by step to two coordinators.
    browser.eval("document.getElementById('tab-explore').click()");
    set(&mut browser, "explore", "algorithm", "bully");
    set(&mut browser, "explore", "nodes", "3");
    browser.eval("document.getElementById('run-explore').click()");
    browser.wait("document.querySelectorAll('#explore-actions button').length > 0");
    let uniqueness = "document.querySelector('#explore-properties tr[data-property=uniqueness]').dataset.result";
    assert_eq!(text(&mut browser, uniqueness), "held");
    // Going one step and back again.
    browser.eval("document.querySelector('#explore-actions button').click()");
    browser.wait("document.body.dataset.exploreDepth === '1'");
    browser.eval("document.getElementById('explore-back').click()");
    browser.wait("document.body.dataset.exploreDepth === '0'");
    // The checker shows the way; the test clicks, among the enabled actions, the one each step names.
    browser.eval("document.getElementById('explore-find-violation').click()");
    browser.wait("document.querySelectorAll('#explore-path li').length > 0");
    let steps: Vec<String> = browser
        .eval("[...document.querySelectorAll('#explore-path li')].map((li) => li.textContent)")
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    // "Take the next step of the path" follows it to its end, each step with the rule it applied, in words.
    for k in 0..steps.len() {
        browser.eval("document.getElementById('explore-follow').click()");
        browser.wait(&format!("document.body.dataset.exploreDepth === '{}'", k + 1));
    }
    assert_eq!(text(&mut browser, uniqueness), "violated");
    assert_eq!(text(&mut browser, "String(document.getElementById('explore-follow').hidden)"), "true");
    let rules = browser
        .eval("[...document.querySelectorAll('#explore-history li .rule')].map((r) => r.textContent)")
        .as_array()
        .unwrap()
        .len();
    assert!(rules > 0, "the steps taken show the rules they applied");
    let rule = text(&mut browser, "document.getElementById('explore-rule-name').textContent");
    let said = text(&mut browser, "document.getElementById('explore-rule-text').textContent");
    assert!(!rule.is_empty() && said.len() > 10, "the last rule and its sentence from the book: {rule:?} {said:?}");
    let views = text(
        &mut browser,
        "[...document.querySelectorAll('#explore-processes td.view')].map((c) => c.textContent).join(' | ')",
    );
    assert!(!views.contains('{') && !views.contains("Port("), "states read in the algorithm's words: {views}");
    assert!(views.contains("coordinator") || views.contains("leader"), "{views}");
    // The raw form is one click away, for developers.
    browser.eval("document.getElementById('explore-raw').click()");
    let raw = text(&mut browser, "document.querySelector('#explore-processes td.detail').textContent");
    assert!(raw.contains('{'), "raw shows Rust's own form: {raw}");
    browser.eval("document.getElementById('explore-raw').click()");
    // A click on a step taken goes back to it; back goes on from there.
    browser.eval("document.querySelector('#explore-history li[data-depth=\"1\"]').click()");
    browser.wait("document.body.dataset.exploreDepth === '1'");
    browser.eval("document.getElementById('explore-back').click()");
    browser.wait("document.body.dataset.exploreDepth === '0'");
    // The same path, clicked by hand among the enabled actions.
    for (k, step) in steps.iter().enumerate() {
        let clicked = browser.eval(&format!(
            "(() => {{ const b = [...document.querySelectorAll('#explore-actions button')].find((b) => b.textContent === {step:?});
               if (b) b.click(); return !!b; }})()"
        ));
        assert_eq!(clicked, Value::Bool(true), "step {} ({step}) is among the enabled actions", k + 1);
        browser.wait(&format!("document.body.dataset.exploreDepth === '{}'", k + 1));
    }
    assert_eq!(text(&mut browser, uniqueness), "violated");
    let red = text(
        &mut browser,
        "getComputedStyle(document.querySelector('#explore-properties tr[data-property=uniqueness] .violated')).backgroundColor",
    );
    assert_eq!(red, "rgb(198, 40, 40)", "uniqueness turns red");
    let coordinators = browser.eval(
        "[...document.querySelectorAll('#explore-processes tr[data-node]')].filter((r) => r.dataset.leader === r.dataset.node).length",
    );
    assert!(coordinators.as_u64().unwrap() >= 1, "a process that declared itself");
    assert!(text(&mut browser, "location.hash").contains("at="), "the address keeps the steps taken");
    shoot(&mut browser, "serve-explore.png");

    // Compare: four ring algorithms, plotted with their bounds.
    browser.eval("document.getElementById('tab-compare').click()");
    set(&mut browser, "compare", "nodes", "4..32");
    set(&mut browser, "compare", "seeds", "2");
    browser.eval("document.getElementById('run-compare').click()");
    finished(&mut browser, "compare");
    assert_eq!(text(&mut browser, "document.getElementById('compare-rows').dataset.rows"), "32");
    let lines = browser.eval("document.querySelectorAll('#compare-plot polyline').length").as_u64().unwrap();
    assert!(lines >= 8, "a line per algorithm and one per bound: {lines}");
    shoot(&mut browser, "serve-compare.png");

    // An error is shown, not thrown: too many processes.
    browser.eval("document.getElementById('tab-sim').click()");
    set(&mut browser, "sim", "nodes", "100000");
    browser.eval("document.getElementById('run-sim').click()");
    browser.wait("document.getElementById('status-sim').dataset.state === 'error'");
    assert!(text(&mut browser, "document.getElementById('status-sim').textContent").contains("--max-nodes"));
}
