//! One screen, in headless Chromium at 1024×768 and at 1400×900: the viewer's controls, its picture and the step
//! that led to it (the rule that fired, in a sentence) are on the screen together, in the Live view as the page
//! opens and in Simulate once its viewer is scrolled to the top; presenting, every text of the picture and of the
//! step is at least 18 px high; the messages in flight never cut their words or cover each other, and a link that
//! carries more than fits shows a count; timers are arcs that drain; and the keyboard crashes a process or cuts a
//! link as a click does.
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
use server::Server;

const SIZES: [(u32, u32); 2] = [(1024, 768), (1400, 900)];

/// The parts of the viewer in frame `frame` (`live`, `sim`) that are not wholly inside the page's window, as
/// "name: top..bottom" (empty when all are).
fn off_screen(browser: &mut Browser, frame: &str) -> String {
    text(
        browser,
        &format!(
            "(() => {{ const f = document.getElementById('viewer-{frame}'), at = f.getBoundingClientRect(), d = f.contentDocument;
               const out = [];
               for (const [name, sel] of [['controls', '#controls'], ['picture', '#topology'], ['step', '#event']]) {{
                 const r = d.querySelector(sel).getBoundingClientRect();
                 const [top, bottom, left, right] = [at.top + r.top, at.top + r.bottom, at.left + r.left, at.left + r.right];
                 if (r.height < 10 || top < 0 || bottom > innerHeight + 0.5 || left < 0 || right > innerWidth + 0.5)
                   out.push(`${{name}}: ${{top.toFixed(0)}}..${{bottom.toFixed(0)}} × ${{left.toFixed(0)}}..${{right.toFixed(0)}}`);
               }}
               return out.join('; '); }})()"
        ),
    )
}

/// The viewer's document in frame `frame`.
fn doc(frame: &str) -> String {
    format!("document.getElementById('viewer-{frame}').contentDocument")
}

/// Waits for the viewer of frame `frame` to have drawn its picture.
fn loaded(browser: &mut Browser, frame: &str) {
    let d = doc(frame);
    browser.wait(&format!("{d} && {d}.getElementById('topology') && {d}.body.dataset.step !== undefined"));
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_controls_the_picture_and_the_rule_that_fired_are_on_one_screen() {
    let server = Server::start(&[]);
    for (width, height) in SIZES {
        let mut browser = Browser::open(&server.url("/"));
        viewport(&mut browser, width, height);
        loaded(&mut browser, "live");
        let live = doc("live");
        // Once a step has been taken, the step pane says which rule fired.
        browser.wait(&format!("{live}.getElementById('event').textContent.includes('rule: ')"));
        browser.wait("window.scrollY === 0");
        // The timers set (the leader's heartbeats, the others' watches) are arcs on the cards, draining as it
        // plays: some part-way down.
        browser.wait(&format!(
            "(() => {{ const arcs = [...{live}.querySelectorAll('#topology .timer-arc')].map((a) => +a.dataset.left);
               return arcs.length > 0 && arcs.every((f) => f >= 0 && f <= 1) && arcs.some((f) => f > 0.05 && f < 0.95); }})()"
        ));
        let missing = off_screen(&mut browser, "live");
        shoot(&mut browser, &format!("screen-live-{width}.png"));
        assert_eq!(missing, "", "Live at {width}×{height}: off the screen");

        // Simulate: the viewer of a run, scrolled to the top of the window.
        browser.navigate(&server.url("/#view=sim&algorithm=bully&nodes=6"));
        loaded(&mut browser, "sim");
        let sim = doc("sim");
        // Forward to the first step that applied a rule (the starts apply none).
        browser.eval(&format!(
            "(() => {{ const d = {sim}; for (let k = 0; k < 40 && !d.getElementById('event').textContent.includes('rule: '); k++)
               d.getElementById('forward').click(); }})()"
        ));
        browser.eval("document.getElementById('viewer-sim').scrollIntoView()");
        browser.wait(&format!("{sim}.getElementById('event').textContent.includes('rule: ')"));
        let missing = off_screen(&mut browser, "sim");
        shoot(&mut browser, &format!("screen-sim-{width}.png"));
        assert_eq!(missing, "", "Simulate at {width}×{height}: off the screen");
    }
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn presenting_every_text_of_the_picture_and_the_step_is_at_least_18_px() {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/"));
    viewport(&mut browser, 1024, 768);
    loaded(&mut browser, "live");
    let live = doc("live");
    browser.eval(&format!("{live}.getElementById('present').click()"));
    browser.wait(&format!("{live}.body.classList.contains('present')"));
    // Pause, so that the picture holds still while it is measured.
    browser.wait(&format!("+{live}.body.dataset.step >= 3"));
    browser.eval(&format!(
        "(() => {{ const p = {live}.getElementById('play'); if (p.textContent.includes('pause')) p.click(); }})()"
    ));
    // Every text drawn in the picture, its size on the screen: its font size times the picture's scale.
    let small = text(
        &mut browser,
        &format!(
            "(() => {{ const d = {live}, out = [];
               for (const t of d.querySelectorAll('#topology text')) {{
                 if (!t.textContent.trim()) continue;
                 const px = parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
                 if (px < 18) out.push(`${{t.textContent}}: ${{px.toFixed(1)}} px`);
               }}
               for (const sel of ['#event', '#position', '#play']) {{
                 const px = parseFloat(getComputedStyle(d.querySelector(sel)).fontSize);
                 if (px < 18) out.push(`${{sel}}: ${{px}} px`);
               }}
               return out.join('; '); }})()"
        ),
    );
    let texts = text(&mut browser, &format!("{live}.querySelectorAll('#topology text').length"));
    shoot(&mut browser, "screen-present-1024.png");
    assert!(texts.parse::<u32>().unwrap() >= 10, "the picture has its texts: {texts}");
    assert_eq!(small, "", "presenting at 1024×768: smaller than 18 px");
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn messages_in_flight_never_cut_their_words_nor_cover_each_other_and_a_full_link_counts() {
    let server = Server::start(&[]);
    for (width, height) in SIZES {
        let mut browser = Browser::open(&server.url("/#view=sim&algorithm=bully&nodes=8"));
        viewport(&mut browser, width, height);
        loaded(&mut browser, "sim");
        let sim = doc("sim");
        let events: u32 = text(&mut browser, &format!("{sim}.body.dataset.events")).parse().unwrap();
        assert!(events > 20, "bully at 8 takes more than 20 steps: {events}");
        let (mut most, mut counted) = (0, false);
        for step in 0..=events.min(120) {
            // The slider goes to a step as a reader's drag does.
            let report = text(
                &mut browser,
                &format!(
                    "(() => {{ const d = {sim}, s = d.getElementById('slider');
                       s.value = {step}; s.dispatchEvent(new Event('input'));
                       const chips = [...d.querySelectorAll('#moving g.message.chip')];
                       const boxes = chips.map((c) => c.querySelector('rect').getBoundingClientRect());
                       const out = [];
                       for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {{
                         const [a, b] = [boxes[i], boxes[j]];
                         if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
                           out.push('covers: ' + chips[i].textContent + ' / ' + chips[j].textContent);
                       }}
                       for (const c of chips) if (c.querySelector('text').textContent.includes('…')) out.push('cut: ' + c.textContent);
                       const shown = chips.reduce((n, c) => n + +c.dataset.count, 0) + d.querySelectorAll('#moving circle.message').length;
                       if (shown !== +d.body.dataset.inFlight) out.push(`shows ${{shown}} of ${{d.body.dataset.inFlight}} in flight`);
                       const counts = chips.filter((c) => +c.dataset.count > 1).length;
                       // The links messages move on are arrows the way they go, as in Explore.
                       if (+d.body.dataset.inFlight > 0 && !d.querySelector('#topology line[data-flow]')) out.push('no arrow');
                       return JSON.stringify({{ out, flight: +d.body.dataset.inFlight, counts }}); }})()"
                ),
            );
            let seen: serde_json::Value = serde_json::from_str(&report).unwrap();
            assert_eq!(seen["out"], serde_json::json!([]), "{width}×{height}, step {step}");
            most = most.max(seen["flight"].as_u64().unwrap());
            counted |= seen["counts"].as_u64().unwrap() > 0;
            if step == 12 {
                shoot(&mut browser, &format!("screen-chips-{width}.png"));
            }
        }
        assert!(most > 20, "Bully at 8 has more than 20 messages in flight at once: {most}");
        assert!(counted, "{width}×{height}: some link carries more messages than fit, and shows a count");
    }
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_keyboard_crashes_a_process_and_cuts_a_link_as_a_click_does() {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/"));
    viewport(&mut browser, 1024, 768);
    loaded(&mut browser, "live");
    let live = doc("live");
    browser.wait(&format!("{live}.body.classList.contains('live')"));
    let keys = |browser: &mut Browser, keys: &[&str]| {
        for key in keys {
            browser.eval(&format!(
                "{} .dispatchEvent(new KeyboardEvent('keydown', {{ key: '{key}', bubbles: true }}))",
                doc("live")
            ));
        }
    };
    // 3, Enter: 3 crashes at the next whole time unit.
    keys(&mut browser, &["3"]);
    assert_eq!(text(&mut browser, &format!("{live}.getElementById('typed').textContent")), "3 ⏎");
    keys(&mut browser, &["Enter"]);
    browser.wait("/^3@\\d+$/.test(document.getElementById('form-live').elements.crash.value)");
    browser.wait(&format!(
        "{live}.body.classList.contains('live') && {live}.querySelector('#nodes tr[data-node=\"3\"]').dataset.state === 'down'"
    ));
    // 1-2, Enter: the link 1–2 is cut, and the viewer is opened again on the run with the cut. The viewer shown
    // before it is marked, so that the keys below go to the new one.
    browser.eval(&format!("{live}.body.dataset.before = 'cut'"));
    keys(&mut browser, &["1", "-", "2", "Enter"]);
    browser.wait("/^1-2@\\d+$/.test(document.getElementById('form-live').elements['link-down'].value)");
    browser.wait(&format!(
        "{live}.body.dataset.before === undefined && {live}.body.classList.contains('live') && {live}.getElementById('typed').textContent === ''"
    ));
    // A process the cluster does not have is refused, and nothing is added.
    keys(&mut browser, &["9", "Enter"]);
    assert_eq!(text(&mut browser, &format!("{live}.getElementById('typed').textContent")), "no process 9");
    let crashes = text(&mut browser, "document.getElementById('form-live').elements.crash.value");
    assert!(crashes.starts_with("3@") && !crashes.contains(' '), "only 3's crash: {crashes}");
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn a_preset_chosen_in_the_live_view_becomes_the_running_cluster() {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/"));
    viewport(&mut browser, 1024, 768);
    loaded(&mut browser, "live");
    browser.wait("document.getElementById('presets').options.length > 3");
    let chosen = browser.eval(
        "(() => { const s = document.getElementById('presets');
           const o = [...s.options].find((o) => o.textContent.startsWith('tour:garcia-molina:'));
           if (!o) return false; s.value = o.value; s.dispatchEvent(new Event('change')); return true; })()",
    );
    assert_eq!(chosen, serde_json::Value::Bool(true), "the header offers Garcia-Molina's showcase run");
    assert_eq!(text(&mut browser, "document.body.dataset.view"), "live");
    browser.wait("document.getElementById('form-live').elements.algorithm.value === 'garcia-molina'");
    browser.wait("document.getElementById('command-live').textContent.includes('--algorithm garcia-molina')");
    let live = doc("live");
    browser.wait(&format!(
        "{live} && {live}.body && {live}.body.classList.contains('live') && {live}.title.includes('garcia-molina')"
    ));
    let command = text(&mut browser, "document.getElementById('command-live').textContent");
    assert!(command.contains("--monitor"), "a preset runs live under the monitor: {command}");
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn a_message_to_a_process_that_crashed_for_good_is_lost_in_explore_too() {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/#view=explore&algorithm=bully&nodes=3&crashes=1"));
    viewport(&mut browser, 1024, 768);
    browser.wait("document.querySelectorAll('#explore-actions button').length > 0");
    // At the start the elections of 1 and 2 are on their way to 3: 3 crashes, with no recovery left.
    let clicked = browser.eval(
        "(() => { const b = [...document.querySelectorAll('#explore-actions button')].find((b) => b.textContent === '3 crashes');
           if (b) b.click(); return !!b; })()",
    );
    assert_eq!(clicked, serde_json::Value::Bool(true), "3's crash is among the enabled actions");
    browser.wait("document.body.dataset.exploreDepth === '1'");
    let status = text(&mut browser, "document.getElementById('status-explore').textContent");
    assert!(status.contains("3 crashes; lost on the way: election") && status.contains("from 1 to 3"), "{status}");
}
