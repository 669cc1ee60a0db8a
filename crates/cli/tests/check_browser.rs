//! `elect serve`'s Check and Explore views in headless Chromium, at 1024×768 and at 1400×900: a counterexample's
//! viewer starts from the messages in flight at the start and shows as many steps as the path has; the scenario's
//! faults (Stoller's crash, recovery and link going down) are steps of the path in the Check view, its viewer and
//! Explore, and the viewer tells a violation's step as a step; the Check form keeps going after a violation, to
//! judge every property.
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

use cdp::Browser;
use page::{finished, shoot, text, viewport};
use server::Server;

const VIEWER: &str = "document.getElementById('viewer-check').contentDocument";
const SIZES: [(u32, u32); 2] = [(1024, 768), (1400, 900)];

/// Opens the page at `width`×`height` on view `view`, with the form's fields set by the address.
fn open(server: &Server, width: u32, height: u32, hash: &str) -> Browser {
    let mut browser = Browser::open(&server.url("/"));
    viewport(&mut browser, width, height);
    browser.wait("document.readyState === 'complete' && document.getElementById('limits').textContent !== ''");
    browser.eval(&format!("location.hash = '{hash}'"));
    browser
}

/// Sets field `name` of form `form` to `value` (a checkbox is checked by "true").
fn set(browser: &mut Browser, form: &str, name: &str, value: &str) {
    browser.eval(&format!(
        "(() => {{ const el = document.getElementById('form-{form}').elements['{name}'];
           if (el.type === 'checkbox') el.checked = {value:?} === 'true'; else el.value = {value:?};
           el.dispatchEvent(new Event('input', {{ bubbles: true }})); }})()"
    ));
}

/// Runs the Check form with `fields`, waits for the viewer, and returns the check's status line.
fn check(browser: &mut Browser, fields: &[(&str, &str)]) -> String {
    browser.eval("document.getElementById('tab-check').click()");
    for (name, value) in fields {
        set(browser, "check", name, value);
    }
    browser.eval("document.getElementById('run-check').click()");
    finished(browser, "check")
}

/// Waits for the Check view's viewer to show step 0, and goes to step `step`.
fn viewer_at(browser: &mut Browser, step: usize) {
    browser.wait(&format!("{VIEWER} && {VIEWER}.body && {VIEWER}.body.dataset.step === '0'"));
    for _ in 0..step {
        browser.eval(&format!("{VIEWER}.getElementById('forward').click()"));
    }
    browser.wait(&format!("{VIEWER}.body.dataset.step === '{step}'"));
}

/// The records the Check view's viewer replays.
fn records(browser: &mut Browser) -> Vec<serde_json::Value> {
    let data = text(browser, &format!("{VIEWER}.getElementById('elect-data').textContent"));
    let data: serde_json::Value = serde_json::from_str(&data).unwrap();
    data["records"].as_array().unwrap().clone()
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_check_viewer_starts_with_the_messages_in_flight_and_shows_every_step_of_the_path() {
    let server = Server::start(&[]);
    let api = server.get("/api/check?algorithm=bully&nodes=3&crashes=1").json();
    let path = api["counterexample"]["path"].as_array().unwrap().clone();
    assert!(path.len() >= 3, "{path:?}");
    let first = &path[0];
    assert_eq!(first["action"], "deliver", "the path starts with a message sent at the start: {first}");
    for (width, height) in SIZES {
        let mut browser = open(&server, width, height, "#view=check");
        let status = check(&mut browser, &[("algorithm", "bully"), ("nodes", "3"), ("crashes", "1")]);
        assert!(status.contains("violated"), "{status}");
        viewer_at(&mut browser, 0);
        // As many steps as the path, and at step 0 the messages the processes sent as they started, in flight.
        let events = text(&mut browser, &format!("{VIEWER}.body.dataset.events"));
        assert_eq!(events, path.len().to_string(), "the viewer's steps are the path's");
        let position = text(&mut browser, &format!("{VIEWER}.getElementById('position').textContent"));
        assert_eq!(position, format!("step 0 of {}", path.len()), "a step is not a time");
        let flight = text(&mut browser, &format!("{VIEWER}.getElementById('flight').textContent"));
        assert!(!flight.starts_with("0 "), "messages in flight at the start: {flight}");
        let start = text(&mut browser, "document.getElementById('check-start').textContent");
        assert!(start.contains("at the start, in flight: election"), "{start}");
        // Step 1 is the path's first step: the delivery of a message sent at the start.
        viewer_at(&mut browser, 1);
        let event = text(&mut browser, &format!("{VIEWER}.getElementById('event').textContent"));
        let (to, from) = (first["to"].to_string(), first["from"].to_string());
        assert!(event.starts_with(&format!("{to} receives {}", first["msg"].as_str().unwrap())), "{event}");
        assert!(event.contains(&format!("from {from}")), "{event}");
        browser.eval("document.getElementById('viewer-check').scrollIntoView()");
        shoot(&mut browser, &format!("check-start-{width}.png"));
    }
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_scheduled_faults_are_steps_in_the_check_view_its_viewer_and_explore() {
    let server = Server::start(&[]);
    for (width, height) in SIZES {
        let mut browser = open(&server, width, height, "#view=check");
        let status = check(&mut browser, &[("scenario", "stoller"), ("timed", "true")]);
        assert!(status.contains("violated: a4"), "{status}");
        // The path in the Check view: the crash, the link going down and the recovery, each a step.
        let path = text(&mut browser, "document.getElementById('check-counterexample').textContent");
        for fault in ["1 crashes", "the link 1-3 goes down", "1 recovers"] {
            assert!(path.contains(fault), "{fault} in {path}");
        }
        // The viewer draws them from the records the simulator writes for them, each a step of its own.
        viewer_at(&mut browser, 0);
        let records = records(&mut browser);
        assert_eq!(records[0]["steps"], true, "the viewer counts steps: {}", records[0]);
        let crash = records.iter().position(|r| r["ev"] == "crash" && r["node"] == 1).expect("a crash record");
        let link = records.iter().find(|r| r["ev"] == "link").expect("a link record");
        assert_eq!((&link["from"], &link["to"], &link["up"]), (&1.into(), &3.into(), &false.into()), "{link}");
        assert!(records.iter().any(|r| r["ev"] == "recover" && r["node"] == 1), "a recover record");
        let step = records[crash]["t"].as_f64().unwrap() as usize;
        viewer_at(&mut browser, step);
        let event = text(&mut browser, &format!("{VIEWER}.getElementById('event').textContent"));
        assert_eq!(event, "1 crashed", "step {step}");
        let state = text(&mut browser, &format!("{VIEWER}.querySelector('#nodes tbody tr').dataset.state"));
        assert_eq!(state, "down", "1 is down after its crash");
        // The violation at the end is told at its step, not as a time.
        let events: usize = text(&mut browser, &format!("{VIEWER}.body.dataset.events")).parse().unwrap();
        browser.eval(&format!(
            "(() => {{ const j = {VIEWER}.getElementById('jump'); j.value = {events};
               j.dispatchEvent(new KeyboardEvent('keydown', {{ key: 'Enter' }})); }})()"
        ));
        browser.wait(&format!("{VIEWER}.body.dataset.step === '{events}'"));
        let violations = text(&mut browser, &format!("{VIEWER}.getElementById('violations').textContent"));
        assert!(violations.contains(&format!("a4 at step {events}")), "{violations}");
        assert!(!violations.contains("t ="), "{violations}");
        browser.eval("document.getElementById('viewer-check').scrollIntoView()");
        shoot(&mut browser, &format!("check-faults-{width}.png"));

        // Explore: the found path to the violation says when the crash and the link going down happen.
        browser.eval("document.getElementById('tab-explore').click()");
        set(&mut browser, "explore", "scenario", "stoller");
        set(&mut browser, "explore", "timed", "true");
        browser.eval("document.getElementById('run-explore').click()");
        browser.wait("!document.getElementById('explore').hidden && document.body.dataset.exploreDepth === '0'");
        browser.eval("document.getElementById('explore-find-violation').click()");
        browser.wait("!document.getElementById('explore-found').hidden && document.getElementById('explore-path').children.length > 0");
        let found = text(&mut browser, "document.getElementById('explore-path').textContent");
        assert!(found.contains("time passes to 30, when 1 crashes; the link 1-3 goes down"), "{found}");
        assert!(found.contains("1 recovers"), "{found}");
        // Walked to, the faults are marked in the lanes, in the column of the time passing that brought them.
        let k = browser.eval(
            "(() => { const li = [...document.querySelectorAll('#explore-path li')].find((li) => li.textContent.includes('1 crashes'));
               li.click(); return +li.dataset.k + 1; })()",
        );
        browser.wait(&format!("document.body.dataset.exploreDepth === '{k}'"));
        browser.wait("document.querySelectorAll('#explore-lanes .lane-fault').length >= 2");
        let marks = browser.eval(
            "[...document.querySelectorAll('#explore-lanes .lane-fault')].map((g) => [g.dataset.step, g.textContent])",
        );
        let marks = marks.as_array().unwrap();
        for (i, said) in ["1 crashes", "the link 1-3 goes down"].iter().enumerate() {
            assert_eq!(marks[i][0], serde_json::json!(k.to_string()), "{marks:?}");
            assert!(marks[i][1].as_str().unwrap().contains(said), "{marks:?}");
        }
        browser.eval(
            "(() => { const box = document.getElementById('explore-lanes'); box.scrollIntoView();
               const mark = box.querySelector('.lane-fault').getBoundingClientRect();
               box.scrollLeft += mark.left - box.getBoundingClientRect().left - box.clientWidth / 2; })()",
        );
        shoot(&mut browser, &format!("explore-lanes-faults-{width}.png"));
        browser.eval("document.getElementById('explore-found').scrollIntoView()");
        shoot(&mut browser, &format!("explore-faults-{width}.png"));
    }
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_check_form_keeps_going_to_judge_every_property() {
    let server = Server::start(&[]);
    for (width, height) in SIZES {
        let mut browser = open(&server, width, height, "#view=check");
        let fields = [("scenario", "stoller"), ("timed", "true"), ("keep-going", "true")];
        let status = check(&mut browser, &fields);
        assert!(status.contains("violated: a4"), "{status}");
        let command = text(&mut browser, "document.getElementById('command-check').textContent");
        assert!(command.contains("--keep-going"), "{command}");
        // Every property has a verdict: a4′ held, where without keep going it is unknown.
        let verdicts = browser.eval(
            "[...document.querySelectorAll('#check-verdicts tr')].map((tr) => [...tr.cells].map((c) => c.textContent.trim()))",
        );
        let row = |p: &str| verdicts.as_array().unwrap().iter().find(|r| r[0] == p).cloned();
        let a4prime = row("a4-prime").unwrap_or_else(|| panic!("a4-prime in {verdicts}"));
        assert_eq!(a4prime[2], "held", "{verdicts}");
        assert_eq!(row("a3").unwrap()[2], "held", "{verdicts}");
        assert_eq!(row("a4").unwrap()[2], "violated", "{verdicts}");
        for r in verdicts.as_array().unwrap().iter().skip(1) {
            assert_ne!(r[2], "unknown", "{verdicts}");
        }
        browser.eval("document.getElementById('check-verdicts').scrollIntoView()");
        shoot(&mut browser, &format!("check-keep-going-{width}.png"));
        // The other properties a kept-going search found violated are listed, each with its path's length (the
        // search bounded, as it would pass the server's limit on states).
        let fields = [
            ("scenario", ""),
            ("timed", "false"),
            ("algorithm", "bully"),
            ("nodes", "3"),
            ("crashes", "1"),
            ("max-depth", "6"),
        ];
        check(&mut browser, &fields);
        let more = text(&mut browser, "document.getElementById('check-more').textContent");
        assert!(more.contains("live-leader") && more.contains("5 steps"), "{more}");
    }
}
