//! `elect serve`'s page as a class uses it, in headless Chromium: a preset of the lecture notes run from the header
//! (no `--allow-files`), a share link that reopens the viewer at its step, a lecture's labels, the exercise mode
//! that hides the counts until a prediction, Stoller's counterexample with its periodic stretch folded, and the
//! presentation mode at 1024×768.
//!
//! Like `serve_browser`, `#[ignore]`d under a plain `cargo test` and run by `scripts/test` with `--ignored` (Chromium
//! from `scripts/install-chromium`); it fails, never skips, when Chromium is missing. `ELECT_SCREENSHOTS=DIR` keeps
//! its screenshots there (`scripts/gallery`).

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
use serde_json::json;
use server::Server;

const SIM_VIEWER: &str = "document.getElementById('viewer-sim').contentDocument";

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
// Long: one class session in one browser, step after step; each step starts from the page the one before left.
fn a_class_runs_presets_shares_steps_predicts_counts_and_presents_at_1024_by_768() {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/"));
    viewport(&mut browser, 1400, 900);
    browser.wait("document.getElementById('presets').options.length > 20");

    // A preset from the header: Garcia-Molina's typical case, a scenario file, run with no flag on the server.
    browser.eval(
        "(() => { const s = document.getElementById('presets');
           s.value = [...s.options].find((o) => o.textContent.startsWith('garcia-molina-typical:')).value;
           s.dispatchEvent(new Event('change')); })()",
    );
    finished(&mut browser, "sim");
    let command = text(&mut browser, "document.getElementById('command-sim').textContent");
    assert!(command.starts_with("elect sim --scenario garcia-molina-typical"), "{command}");
    assert_eq!(text(&mut browser, "document.getElementById('sim-leader').dataset.leader"), "7");

    // The viewer's step goes into the address; the address reopens the viewer at that step.
    browser.wait(&format!("{SIM_VIEWER} && {SIM_VIEWER}.body && {SIM_VIEWER}.body.dataset.step === '0'"));
    for _ in 0..9 {
        browser.eval(&format!("{SIM_VIEWER}.getElementById('forward').click()"));
    }
    browser.wait("location.hash.includes('step=9')");
    let hash = text(&mut browser, "location.hash");
    assert!(hash.contains("scenario=garcia-molina-typical"), "{hash}");
    browser.navigate("about:blank");
    browser.navigate(&server.url(&format!("/{hash}")));
    browser.wait(&format!("{SIM_VIEWER} && {SIM_VIEWER}.body && {SIM_VIEWER}.body.dataset.step === '9'"));
    let event = text(&mut browser, &format!("{SIM_VIEWER}.getElementById('event').textContent"));
    assert!(!event.contains("before the first step"), "{event}");
    // Back one step, then play a few and pause: the address follows.
    browser.eval(&format!("{SIM_VIEWER}.getElementById('back').click()"));
    assert_eq!(text(&mut browser, &format!("{SIM_VIEWER}.body.dataset.step")), "8");
    browser.eval(&format!("{SIM_VIEWER}.getElementById('play').click()"));
    browser.wait(&format!("+{SIM_VIEWER}.body.dataset.step >= 11"));
    browser.eval(&format!("{SIM_VIEWER}.getElementById('play').click()"));
    let paused = text(&mut browser, &format!("{SIM_VIEWER}.body.dataset.step"));
    browser.wait(&format!("location.hash.includes('step={paused}')"));

    // A lecture's names: the counts and the viewer say NEW-LEADER where elect says new-coordinator.
    browser.eval(
        "(() => { const f = document.getElementById('form-sim'); f.elements.label.value = 'new-coordinator=NEW-LEADER';
           f.dispatchEvent(new Event('input')); f.requestSubmit(); })()",
    );
    finished(&mut browser, "sim");
    assert!(text(&mut browser, "document.getElementById('result-sim').textContent").contains("NEW-LEADER"));
    browser.wait(&format!("{SIM_VIEWER} && {SIM_VIEWER}.body && {SIM_VIEWER}.body.dataset.step === '0'"));
    // Step until a step sends the new leader's announcement, and read that step's sentence and chips.
    let said = text(
        &mut browser,
        &format!(
            "(() => {{ const d = {SIM_VIEWER};
                for (let k = 0; k < 400; k++) {{
                  const e = d.getElementById('event').textContent;
                  if (e.includes('sends: NEW-LEADER')) return e + ' | ' + d.getElementById('topology').textContent;
                  d.getElementById('forward').click();
                }}
                return 'no step sent NEW-LEADER: ' + d.getElementById('event').textContent; }})()"
        ),
    );
    // The rule keeps the book's words; the messages take the lecture's.
    let messages: String = said.lines().filter(|l| !l.starts_with("rule:")).collect();
    assert!(messages.contains("NEW-LEADER (epoch"), "{said}");
    assert!(!messages.replace("new-coordinator-ack", "").contains("new-coordinator"), "{said}");
    let legend = text(&mut browser, &format!("{SIM_VIEWER}.getElementById('spacetime-pane').textContent"));
    assert!(legend.contains("NEW-LEADER (6)") && !legend.contains("new-coordinator ("), "{legend}");

    // The exercise mode: the counts and bounds stay hidden until a prediction is entered.
    browser.eval(
        "(() => { const f = document.getElementById('form-sim'); f.elements.scenario.value = '';
           f.elements.label.value = ''; f.elements.algorithm.value = 'chang-roberts'; f.elements.nodes.value = '8';
           f.elements.ids.value = 'descending'; document.getElementById('exercise').checked = true;
           f.dispatchEvent(new Event('input')); f.requestSubmit(); })()",
    );
    finished(&mut browser, "sim");
    let hidden = "getComputedStyle(document.querySelector('#sim-leader .count')).visibility";
    assert_eq!(text(&mut browser, hidden), "hidden");
    assert_eq!(text(&mut browser, "getComputedStyle(document.getElementById('sim-bounds')).display"), "none");
    browser.eval("document.getElementById('reveal').click()");
    assert!(text(&mut browser, "document.getElementById('verdict').textContent").contains("enter a number"));
    assert_eq!(text(&mut browser, hidden), "hidden", "no count before a prediction");
    browser.eval("document.getElementById('prediction').value = '36'; document.getElementById('reveal').click()");
    // Chang-Roberts, descending ids on 8: n(n + 1)/2 = 36 tokens, what its bound counts, and n announcements.
    let verdict = text(&mut browser, "document.getElementById('verdict').textContent");
    assert_eq!(verdict, "you said 36; the run sent 36 token messages (44 in all): exactly right");
    assert_eq!(text(&mut browser, hidden), "visible");
    browser.eval("document.getElementById('exercise').checked = false");

    // Stoller's counterexample, from its scenario: 446 steps (443 and the scenario's three faults), its periodic
    // stretch folded into one line.
    browser.eval("document.getElementById('tab-check').click()");
    browser.eval(
        "(() => { const f = document.getElementById('form-check'); f.elements.scenario.value = 'stoller';
           f.elements.timed.checked = true; f.dispatchEvent(new Event('input')); f.requestSubmit(); })()",
    );
    finished(&mut browser, "check");
    let steps = browser.eval("document.querySelectorAll('#check-counterexample li:not(.fold-row)').length");
    assert_eq!(steps, json!(446), "every step is there, folded or not");
    let shown = browser.eval("document.querySelectorAll('#check-counterexample > ol > li').length");
    let shown = shown.as_u64().unwrap();
    assert!(shown < 150, "{shown} lines for 446 steps");
    let folds = text(
        &mut browser,
        "[...document.querySelectorAll('#check-counterexample summary')].map((s) => s.textContent).join('\\n')",
    );
    assert!(folds.contains("times"), "{folds}");

    // Presentation at 1024×768: large type, and nothing wider than the window.
    viewport(&mut browser, 1024, 768);
    browser.eval("document.getElementById('tab-sim').click()");
    browser.eval("document.getElementById('present').click()");
    assert_eq!(text(&mut browser, "getComputedStyle(document.body).fontSize"), "19px");
    browser.eval(
        "(() => { const f = document.getElementById('form-sim'); f.elements.algorithm.value = 'bully';
           f.elements.nodes.value = '5'; f.elements.ids.value = 'ascending'; f.requestSubmit(); })()",
    );
    finished(&mut browser, "sim");
    browser.wait(&format!("{SIM_VIEWER} && {SIM_VIEWER}.body && {SIM_VIEWER}.body.dataset.step === '0'"));
    browser.eval(&format!("{SIM_VIEWER}.getElementById('present').click()"));
    assert!(browser.eval(&format!("{SIM_VIEWER}.body.classList.contains('present')")) == json!(true));
    let page_width = browser.eval("document.documentElement.scrollWidth <= window.innerWidth");
    assert_eq!(page_width, json!(true), "the page fits 1024 pixels");
    // Presenting, the viewer takes the whole window (the page gives its frame all of it), and nothing is cut on the
    // right.
    let sizes = format!(
        "(() => {{ const frame = document.getElementById('viewer-sim');
            const table = {SIM_VIEWER}.getElementById('nodes').getBoundingClientRect();
            return [table.right, frame.clientWidth, frame.getBoundingClientRect().top, frame.clientHeight]; }})()"
    );
    browser.wait(&format!(
        "(([right, width, top, height]) => right <= width + 1 && top === 0 && height >= innerHeight - 1 \
           && width >= innerWidth - 1)({sizes})"
    ));
    let [right, width, ..] = serde_json::from_value::<[f64; 4]>(browser.eval(&sizes)).unwrap();
    assert!(right <= width + 1.0, "the viewer's table ends at {right}, its frame at {width}");
    browser.eval("document.getElementById('viewer-sim').scrollIntoView()");
    shoot(&mut browser, "serve-present-1024.png");

    // The picture at this step, as SVG: the topology with its labels, a file of its own.
    let svg = browser.eval(&format!(
        "new Promise((resolve) => {{ const w = document.getElementById('viewer-sim').contentWindow;
            w.URL.createObjectURL = (blob) => {{ blob.text().then(resolve); return 'blob:none'; }};
            {SIM_VIEWER}.getElementById('save-svg').click(); }})"
    ));
    let svg = svg.as_str().unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("data-node=\"5\""), "{}", &svg[..svg.len().min(300)]);
}
