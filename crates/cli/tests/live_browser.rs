//! `elect serve`'s Live view in headless Chromium, at 1024×768 and at 1400×900: the page opens on a running
//! cluster; a click on the leader crashes it and the others elect another; a click on a link cuts it; the command
//! the page exports replays the run to the same end, and the page's address reopens it.
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
use page::{shoot, text, viewport};
use server::{Server, elect};

const LIVE: &str = "document.getElementById('viewer-live').contentDocument";

/// Whether every live process of the viewer's table follows `leader`.
fn all_follow(leader: u32) -> String {
    format!(
        "(() => {{ const rows = [...{LIVE}.querySelectorAll('#nodes tbody tr')].filter((tr) => tr.dataset.state !== 'down');
           return rows.length > 0 && rows.every((tr) => tr.dataset.leader === '{leader}'); }})()"
    )
}

/// A click on the first element of the viewer's picture that `selector` finds.
fn click(browser: &mut Browser, selector: &str) {
    let clicked = browser.eval(&format!(
        "(() => {{ const e = {LIVE}.querySelector('#topology-pane {selector}'); if (!e) return false;
           e.dispatchEvent(new MouseEvent('click', {{ bubbles: true }})); return true; }})()"
    ));
    assert_eq!(clicked, serde_json::Value::Bool(true), "nothing in the picture matches {selector}");
}

/// The words of a command line as a POSIX shell reads them (the page quotes with single quotes only).
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => (quoted, any) = (!quoted, true),
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => (word, any) = (word + &c.to_string(), true),
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// The Live view's run, as its summary line reports it: leader, events, messages, end.
fn summary(browser: &mut Browser) -> [String; 4] {
    ["leader", "events", "messages", "end"]
        .map(|k| text(browser, &format!("document.getElementById('live-summary').dataset.{k}")))
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn a_running_cluster_where_a_click_crashes_the_leader_cuts_a_link_and_the_command_replays_it() {
    let server = Server::start(&[]);
    for (width, height) in [(1024, 768), (1400, 900)] {
        let mut browser = Browser::open(&server.url("/"));
        viewport(&mut browser, width, height);
        browser.wait("document.body.dataset.view === 'live'");
        browser.wait(&format!("{LIVE} && {LIVE}.body && {LIVE}.body.classList.contains('live')"));
        // It plays on its own: the step moves with no click.
        let first = text(&mut browser, &format!("{LIVE}.body.dataset.step"));
        browser.wait(&format!("+{LIVE}.body.dataset.step >= {} + 3", first.parse::<u32>().unwrap()));
        assert!(!text(&mut browser, "document.getElementById('command-live').textContent").contains("--crash"));
        // Faster, to keep the test short; the speed survives every rerun below.
        browser
            .eval(&format!("(() => {{ const s = {LIVE}.getElementById('speed'); s.value = '25'; s.onchange(); }})()"));
        browser.wait(&all_follow(5));

        // The class asks "and if 5 dies now?": a click on 5.
        let step = text(&mut browser, &format!("{LIVE}.body.dataset.step")).parse::<u32>().unwrap();
        click(&mut browser, "[data-node=\"5\"]");
        browser.wait("/^5@\\d+$/.test(document.getElementById('form-live').elements.crash.value)");
        browser.wait("document.getElementById('status-live').textContent.startsWith('5 crashes at t = ')");
        // The run again, resumed where the class was (not from the start), and still playing at 25 steps a second.
        browser.wait(&format!(
            "{LIVE}.body.classList.contains('live') && {LIVE}.getElementById('speed').value === '25' \
             && {LIVE}.querySelector('#nodes tr[data-node=\"5\"]').dataset.state === 'down'"
        ));
        let resumed = text(&mut browser, &format!("{LIVE}.body.dataset.step")).parse::<u32>().unwrap();
        assert!(resumed >= step, "resumed at step {resumed}, before the step {step} the crash was asked at");
        browser.wait(&all_follow(4));
        shoot(&mut browser, &format!("serve-live-{width}.png"));

        // A link cut: 1–2, by a click on the line between them.
        click(&mut browser, "[data-hit=\"1-2\"], [data-hit=\"2-1\"]");
        browser.wait("/^(1-2|2-1)@\\d+$/.test(document.getElementById('form-live').elements['link-down'].value)");
        browser.wait(&format!(
            "{LIVE}.body.classList.contains('live') && {LIVE}.querySelector('#topology [data-broken=\"both\"]')"
        ));
        // And healed by a second click: the fault gets its end.
        click(&mut browser, "[data-hit=\"1-2\"], [data-hit=\"2-1\"]");
        browser.wait(
            "/^(1-2|2-1)@\\d+\\.\\.\\d+$/.test(document.getElementById('form-live').elements['link-down'].value)",
        );
        browser.wait(&format!(
            "{LIVE}.body.classList.contains('live') && !{LIVE}.querySelector('#topology [data-broken=\"both\"]')"
        ));
        let seen = summary(&mut browser);

        // The exported command replays the run to the same end.
        let line = text(&mut browser, "document.getElementById('command-live').textContent");
        browser.eval("document.getElementById('live-copy').click()");
        browser.wait(
            "/^(copied: elect sim|the command is selected)/.test(document.getElementById('status-live').textContent)",
        );
        let argv = words(&line);
        assert_eq!(argv[..2], ["elect", "sim"], "{line}");
        assert!(line.contains("--crash 5@") && line.contains("--link-down"), "{line}");
        let mut args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
        args.push("--json");
        let (code, out, err) = elect(&args);
        assert!(code == 0 || code == 1, "{line}: {err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        let replayed = [
            report["leader"].to_string(),
            report["events"].to_string(),
            report["messages"]["total"].to_string(),
            report["end_time"].to_string(),
        ];
        assert_eq!(replayed, seen, "{line}");
        assert_eq!(seen[0], "4", "{line}: 4 leads at the end");

        // The address is the lecture: opened again, it runs the same faults to the same end.
        let hash = text(&mut browser, "location.hash");
        assert!(hash.contains("crash=5%40") && hash.contains("view=live"), "{hash}");
        browser.navigate("about:blank");
        browser.navigate(&server.url(&format!("/{hash}")));
        browser.wait(&format!("{LIVE} && {LIVE}.body && {LIVE}.body.classList.contains('live')"));
        assert_eq!(summary(&mut browser), seen, "{hash}");
    }
}
