//! `elect serve`'s exercise mode in headless Chromium, at 1024×768 and at 1400×900: with *exercise* ticked, no text
//! a student can see in the Simulate view (the cards, the pictures under them opened, the viewer's frame, their
//! tooltips) gives the run's message counts away before *reveal*; the prediction is checked against the number the
//! card asks for (Chang-Roberts's tokens, what its bound counts), and the verdict says which number that is.
//!
//! Like `serve_browser`, `#[ignore]`d under a plain `cargo test` and run with `--ignored` (Chromium from
//! `scripts/install-chromium`); it fails, never skips, when Chromium is missing. Its screenshots are in
//! `target/tmp/` (or `ELECT_SCREENSHOTS`).

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

const SIM_VIEWER: &str = "document.getElementById('viewer-sim').contentDocument";

/// The text a reader can see in the Simulate view and in its viewer's frame, one piece a line: every text node
/// whose element is rendered and visible, the tooltips (`title` attributes, SVG `<title>`s) of rendered elements,
/// and the values of fields. Choices in a list (`<option>`) are not results and are left out.
const VISIBLE: &str = "(() => {
  const seen = [];
  const shown = (el) => el && el.checkVisibility({ visibilityProperty: true, opacityProperty: true });
  const read = (root) => {
    const walk = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      const el = t.parentElement;
      if (!t.textContent.trim() || el.closest('option, datalist, script, style')) continue;
      if (el.tagName.toLowerCase() === 'title' ? shown(el.parentElement) : shown(el)) seen.push(t.textContent.trim());
    }
    for (const el of root.querySelectorAll('[title]')) if (shown(el)) seen.push(el.getAttribute('title'));
    for (const el of root.querySelectorAll('input')) if (shown(el) && el.value) seen.push(el.value);
  };
  read(document.getElementById('view-sim'));
  const frame = document.getElementById('viewer-sim');
  if (!frame.hidden && frame.contentDocument && frame.contentDocument.body) read(frame.contentDocument.body);
  return seen.join('\\n');
})()";

/// Whether `text` holds `number` as a whole number (not as a part of another, nor of a decimal).
fn holds(text: &str, number: &str) -> bool {
    text.match_indices(number).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + number.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit() || c == '.') && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// Runs Chang-Roberts on 8 descending ids (36 tokens, 44 messages in all) from the Simulate form, exercise ticked,
/// and waits for its viewer; the pictures under the cards are opened, as a curious student would.
fn run_the_exercise(browser: &mut Browser) {
    browser.eval("void (window.before = document.getElementById('viewer-sim').contentDocument)");
    browser.eval(
        "(() => { document.getElementById('tab-sim').click(); const f = document.getElementById('form-sim');
           f.elements.scenario.value = ''; f.elements.label.value = ''; f.elements.algorithm.value = 'chang-roberts';
           f.elements.nodes.value = '8'; f.elements.ids.value = 'descending';
           document.getElementById('exercise').checked = true;
           f.dispatchEvent(new Event('input')); f.requestSubmit(); })()",
    );
    finished(browser, "sim");
    browser.wait(&format!(
        "{SIM_VIEWER} !== window.before && {SIM_VIEWER}.body && {SIM_VIEWER}.body.dataset.step === '0'"
    ));
    browser.eval("document.getElementById('pictures-sim').open = true");
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_exercise_hides_every_count_until_reveal_and_checks_the_number_the_card_asks_for() {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/"));
    browser.wait("document.getElementById('presets').options.length > 20");
    for (width, height, guess, verdict) in [
        (1024, 768, "40", "you said 40; the run sent 36 token messages (44 in all): off by +4"),
        (1400, 900, "36", "you said 36; the run sent 36 token messages (44 in all): exactly right"),
    ] {
        viewport(&mut browser, width, height);
        run_the_exercise(&mut browser);
        let before = text(&mut browser, VISIBLE);
        // What the page does show: the run, its leader, the question and the viewer's own title.
        for shown in ["leader 8", "How many token messages will this run send?", "chang-roberts on ring of 8"] {
            assert!(before.contains(shown), "{width}×{height}: {shown:?} is shown\n{before}");
        }
        for count in ["36", "44"] {
            assert!(!holds(&before, count), "{width}×{height}: {count} is shown before reveal\n{before}");
        }
        let hidden = browser.eval(&format!(
            "[...{SIM_VIEWER}.querySelectorAll('.count')].filter((c) => c.checkVisibility({{ visibilityProperty: true }})).length"
        ));
        assert_eq!(hidden, serde_json::json!(0), "{width}×{height}: the viewer hides its counts");
        shoot(&mut browser, &format!("exercise-{width}x{height}-before.png"));

        browser.eval(&format!(
            "document.getElementById('prediction').value = '{guess}'; document.getElementById('reveal').click()"
        ));
        assert_eq!(text(&mut browser, "document.getElementById('verdict').textContent"), verdict);
        let after = text(&mut browser, VISIBLE);
        for shown in [", 44 messages", "(36)", "(8)"] {
            assert!(after.contains(shown), "{width}×{height}: {shown:?} is shown after reveal\n{after}");
        }
        let shown = browser.eval(&format!(
            "[...{SIM_VIEWER}.querySelectorAll('.count')].map((c) => c.checkVisibility({{ visibilityProperty: true }}) ? c.textContent : '')"
        ));
        assert_eq!(shown, serde_json::json!([", 44 messages", "(36)", "(8)"]), "{width}×{height}: the viewer's counts");
        shoot(&mut browser, &format!("exercise-{width}x{height}-after.png"));
    }
}

#[test]
fn a_whole_number_is_found_alone_and_not_inside_another() {
    assert!(holds("leader 8, 44 messages", "44"));
    assert!(holds("token (36)", "36"));
    assert!(!holds("step 0 of 144", "44") && !holds("t = 4.36", "36") && !holds("360", "36"));
}
