//! `elect serve`'s page in a real browser: headless Chromium, driven through the DevTools protocol, loads each
//! view, fills its form, runs it, steps the viewer, and in Explore clicks its way to untimed Bully's two
//! coordinators on three processes, where the uniqueness property turns red. A second test steps Explore by its
//! picture: the state cards, a message delivered by a click on its chip, back and forward, a timer fired from its
//! card, at 1400×900 and at 1024×768. A third explores Chang-Roberts written in Python, in its own words.
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
#[path = "common/page.rs"]
mod page;
#[path = "common/server.rs"]
mod server;

use cdp::Browser;
use page::{finished, shoot, shoot_at_1024, text};
use serde_json::Value;
use server::Server;

/// Sets the field `name` of form `form` to `value` (a tick for `true`), as typing would.
fn set(browser: &mut Browser, form: &str, name: &str, value: &str) {
    browser.eval(&format!(
        "(() => {{ const el = document.getElementById('form-{form}').elements['{name}'];
           if (el.type === 'checkbox') el.checked = {value:?} === 'true'; else el.value = {value:?};
           el.dispatchEvent(new Event('input', {{ bubbles: true }})); }})()"
    ));
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
// Long: one visit to the page in one browser, view after view; each starts from the page the one before left.
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
    shoot_at_1024(&mut browser, "viewer-sim", "serve-simulate-1024.png");

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
    shoot_at_1024(&mut browser, "result-check", "serve-check-1024.png");

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

/// The words Bully's processes describe themselves with (`view()` in `crates/algos/src/bully.rs`).
const BULLY_ROLES: [&str; 5] = ["candidate", "waiting for the coordinator", "coordinator", "follower", "idle"];

/// What Explore's picture and tables show now: the cards' text, the chips' and the processes table.
fn explored(browser: &mut Browser) -> String {
    text(
        browser,
        "[...document.querySelectorAll(
             '#explore-canvas [data-card], #explore-canvas [data-chip], #explore-processes tr')]
           .map((e) => e.textContent).join(' | ')",
    )
}

/// Clicks the first chip that may arrive now, as a user would, and returns the step it names ("2 receives ... from
/// 1").
fn click_chip(browser: &mut Browser, depth: usize) -> String {
    let chip = browser.eval(
        "(() => { const c = document.querySelector('#explore-canvas [data-chip][data-deliverable=true]');
           return c && { from: c.dataset.from, to: c.dataset.to, text: c.dataset.text, chip: c.dataset.chip }; })()",
    );
    assert!(chip.is_object(), "a chip that may arrive now");
    let selector = format!("#explore-canvas [data-chip=\"{}\"]", chip["chip"].as_str().unwrap());
    browser.eval(&format!(
        "document.querySelector({selector:?}).dispatchEvent(new MouseEvent('click', {{ bubbles: true }}))"
    ));
    browser.wait(&format!("document.body.dataset.exploreDepth === '{depth}'"));
    let (from, to, msg) =
        (chip["from"].as_str().unwrap(), chip["to"].as_str().unwrap(), chip["text"].as_str().unwrap());
    format!("{to} receives {msg} from {from}")
}

/// The step that led to the state shown now, as the history says it (the history also lists the steps ahead).
fn last_taken(browser: &mut Browser) -> String {
    text(browser, "document.querySelector('#explore-history li.here').textContent")
}

/// A server, and a page on it with Explore started on untimed Bully with three processes, its cards drawn.
fn explore_bully_on_three() -> (Server, Browser) {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/"));
    browser.wait("document.readyState === 'complete' && document.getElementById('limits').textContent !== ''");
    browser.eval("document.getElementById('tab-explore').click()");
    set(&mut browser, "explore", "algorithm", "bully");
    set(&mut browser, "explore", "nodes", "3");
    browser.eval("document.getElementById('run-explore').click()");
    browser.wait("document.querySelectorAll('#explore-canvas [data-card]').length === 3");
    (server, browser)
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
// Long: one session of Explore, step after step; each step starts from the state the one before left.
fn explore_draws_the_state_and_steps_by_its_picture() {
    let (_server, mut browser) = explore_bully_on_three();

    // A state card per process, in position order, each in the algorithm's words; the picture comes first.
    let cards = browser.eval(
        "[...document.querySelectorAll('#explore-canvas [data-card]')].map((c) => [c.dataset.card, c.textContent])",
    );
    let cards = cards.as_array().unwrap();
    assert_eq!(cards.len(), 3, "{cards:?}");
    for (k, card) in cards.iter().enumerate() {
        let (id, said) = (card[0].as_str().unwrap(), card[1].as_str().unwrap());
        assert_eq!(id, (k + 1).to_string());
        assert!(BULLY_ROLES.iter().any(|r| said.contains(r)), "card {id} in Bully's words: {said}");
        assert!(!said.contains('{'), "card {id} is not the Debug form: {said}");
    }
    let first = text(
        &mut browser,
        "document.getElementById('explore-canvas')
           .compareDocumentPosition(document.getElementById('explore-actions')) & 4 ? 'canvas' : 'tables'",
    );
    assert_eq!(first, "canvas", "the picture comes before the tables");
    // The topology's links, and each message in flight a chip coloured as its kind is everywhere else.
    let links = browser
        .eval(
            "new Set([...document.querySelectorAll('#explore-canvas [data-link], #explore-canvas [data-flow]')]
               .map((l) => (l.dataset.link || l.dataset.flow).split('-').sort().join('-'))).size",
        )
        .as_u64()
        .unwrap();
    assert_eq!(links, 3, "the complete graph's three links, as lines or as the arrows of the messages on them");
    let flight = browser
        .eval(
            "[...document.querySelectorAll('#explore-links td.mono')]
               .reduce((n, t) => n + t.innerHTML.split('<br>').length, 0)",
        )
        .as_u64()
        .unwrap();
    let chips = browser.eval("document.querySelectorAll('#explore-canvas [data-chip]').length").as_u64().unwrap();
    assert!(chips > 0 && chips == flight, "a chip per message in flight: {chips} chips, {flight} messages");
    let coloured = browser.eval(
        "[...document.querySelectorAll('#explore-canvas [data-chip]')].every((c) =>
           c.querySelector('rect').getAttribute('fill') === lastOut.colours[c.dataset.kind])",
    );
    assert_eq!(coloured, Value::Bool(true), "chips take their kind's colour");
    // Untimed, every armed timer may fire: a clock badge for each, on its process's card.
    let fires = browser
        .eval(
            "[...document.querySelectorAll('#explore-actions button')]
               .filter((b) => b.textContent.includes('timer fires')).length",
        )
        .as_u64()
        .unwrap();
    let clocks =
        browser.eval("document.querySelectorAll('#explore-canvas [data-card] [data-timer]').length").as_u64().unwrap();
    assert_eq!(clocks, fires, "a clock badge per timer that may fire");
    assert_eq!(text(&mut browser, "String(document.getElementById('explore-forward').disabled)"), "true");

    // A click on a chip delivers that message.
    let delivered = click_chip(&mut browser, 1);
    let taken = last_taken(&mut browser);
    assert!(taken.starts_with(&delivered), "the history names the delivery: {taken:?}, not {delivered:?}");
    let one = explored(&mut browser);
    let second = click_chip(&mut browser, 2);
    assert!(last_taken(&mut browser).starts_with(&second));
    let two = explored(&mut browser);

    // Back twice, forward twice: the same states again, the same history.
    browser.eval("document.getElementById('explore-back').click()");
    browser.wait("document.body.dataset.exploreDepth === '1'");
    assert_eq!(explored(&mut browser), one);
    browser.eval("document.getElementById('explore-back').click()");
    browser.wait("document.body.dataset.exploreDepth === '0'");
    assert_eq!(text(&mut browser, "String(document.getElementById('explore-forward').disabled)"), "false");
    browser.eval("document.getElementById('explore-forward').click()");
    browser.wait("document.body.dataset.exploreDepth === '1'");
    assert_eq!(explored(&mut browser), one, "forward comes back to the state after the first delivery");
    assert!(last_taken(&mut browser).starts_with(&delivered));
    browser.eval("document.getElementById('explore-forward').click()");
    browser.wait("document.body.dataset.exploreDepth === '2'");
    assert_eq!(explored(&mut browser), two, "and to the state after the second");
    assert!(last_taken(&mut browser).starts_with(&second));
    assert_eq!(text(&mut browser, "String(document.getElementById('explore-forward').disabled)"), "true");

    // The history goes back several steps at once, and forward takes them again.
    browser.eval("document.querySelector('#explore-history li[data-depth=\"1\"]').click()");
    browser.wait("document.body.dataset.exploreDepth === '1'");
    browser.eval("document.getElementById('explore-forward').click()");
    browser.wait("document.body.dataset.exploreDepth === '2'");
    assert_eq!(explored(&mut browser), two);

    // A clock badge fires its timer; a different step forgets what forward would have taken again.
    browser.eval("document.getElementById('explore-back').click()");
    browser.wait("document.body.dataset.exploreDepth === '1' && !document.getElementById('explore-forward').disabled");
    let clock = browser.eval(
        "(() => { const t = document.querySelector('#explore-canvas [data-timer]');
           if (t) t.dispatchEvent(new MouseEvent('click', { bubbles: true })); return !!t; })()",
    );
    assert_eq!(clock, Value::Bool(true), "a timer may fire");
    browser.wait("document.body.dataset.exploreDepth === '2'");
    let fired = last_taken(&mut browser);
    assert!(fired.contains("'s timer fires ("), "{fired}");
    assert_eq!(text(&mut browser, "String(document.getElementById('explore-forward').disabled)"), "true");

    // Raw: the Debug forms, in the cards and the chips.
    browser.eval("document.getElementById('explore-raw').click()");
    let raw = text(&mut browser, "document.querySelector('#explore-canvas [data-card]').textContent");
    assert!(raw.contains('{'), "raw cards show Rust's own form: {raw}");
    browser.eval("document.getElementById('explore-raw').click()");

    // Readable at both sizes, with no horizontal scrollbar.
    browser.eval("document.getElementById('explore').scrollIntoView()");
    shoot(&mut browser, "serve-explore-canvas.png");
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        serde_json::json!({ "width": 1024, "height": 768, "deviceScaleFactor": 1, "mobile": false }),
    );
    browser.wait("window.innerWidth === 1024");
    let fits = browser.eval(
        "document.documentElement.scrollWidth <= window.innerWidth &&
           document.querySelector('#explore-canvas svg').getBoundingClientRect().right <= window.innerWidth",
    );
    assert_eq!(fits, Value::Bool(true), "no horizontal scrollbar at 1024×768");
    browser.eval("document.getElementById('explore').scrollIntoView()");
    shoot(&mut browser, "serve-explore-canvas-1024.png");
}

/// The depth Explore shows, once it has settled at `depth`.
fn at_depth(browser: &mut Browser, depth: usize) {
    browser.wait(&format!("document.body.dataset.exploreDepth === '{depth}'"));
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn explore_keeps_every_branch_draws_its_steps_and_goes_to_any_of_them() {
    let (_server, mut browser) = explore_bully_on_three();
    assert_eq!(text(&mut browser, "String(document.getElementById('explore-lanes').hidden)"), "true", "no step yet");

    // Two deliveries: the space-time diagram has a lane per process, a mark per step, an arrow per arrival.
    let first = click_chip(&mut browser, 1);
    let second = click_chip(&mut browser, 2);
    let two = explored(&mut browser);
    let lanes = browser.eval(
        "(() => { const d = document.getElementById('explore-lanes');
           return [d.querySelectorAll('.lane-step').length, d.querySelectorAll('.lane-message').length,
                   d.querySelectorAll('.column').length, d.querySelector('.cursor').getAttribute('x1')]; })()",
    );
    assert_eq!(lanes[0], 2, "a mark per step: {lanes}");
    assert_eq!(lanes[1], 2, "an arrow per message that arrived: {lanes}");
    assert_eq!(lanes[2], 3, "a column for the start and for each step: {lanes}");
    let cursor_at_two = lanes[3].as_str().unwrap().to_owned();

    // A click on the diagram's first step goes back to it; the diagram keeps the step ahead, pale, and its cursor moves.
    browser.eval(
        "document.querySelector('#explore-lanes .column[data-step=\"1\"]').dispatchEvent(new MouseEvent('click', { bubbles: true }))",
    );
    at_depth(&mut browser, 1);
    let cursor = text(&mut browser, "document.querySelector('#explore-lanes .cursor').getAttribute('x1')");
    assert_ne!(cursor, cursor_at_two, "the cursor follows the step shown");
    let ahead = browser.eval("document.querySelectorAll('#explore-history li.ahead').length");
    assert_eq!(ahead, 1, "the step ahead stays in the history, for forward");

    // Another step from here starts a branch; the old one stays, under the step it leaves from.
    let other = browser.eval(&format!(
        "(() => {{ const b = [...document.querySelectorAll('#explore-actions button')]
             .find((b) => !b.textContent.startsWith({second:?}));
           if (b) b.click(); return b ? b.textContent : null; }})()"
    ));
    let other = other.as_str().expect("another enabled action").to_owned();
    at_depth(&mut browser, 2);
    assert!(last_taken(&mut browser).starts_with(&other), "the new branch is the path shown");
    let branches =
        browser.eval("[...document.querySelectorAll('#explore-history li.branch')].map((li) => li.textContent)");
    let branches = branches.as_array().unwrap();
    assert_eq!(branches.len(), 1, "{branches:?}");
    assert!(branches[0].as_str().unwrap().starts_with(&second), "the old branch, by its first step: {branches:?}");

    // A click on the old branch goes back to its state; the first step is the same on both.
    browser.eval("document.querySelector('#explore-history li.branch').click()");
    browser.wait(&format!(
        "document.body.dataset.exploreDepth === '2' && [...document.querySelectorAll('#explore-history li[data-depth]')].pop().textContent.startsWith({second:?})"
    ));
    assert_eq!(explored(&mut browser), two, "the state at the end of the old branch");
    let path = text(
        &mut browser,
        "[...document.querySelectorAll('#explore-history li[data-depth]')].map((li) => li.textContent).join(' | ')",
    );
    assert!(path.starts_with(&first), "{path}");

    // A found path: a click on its third step goes there, from wherever the page is.
    browser.eval("document.getElementById('explore-back').click()");
    at_depth(&mut browser, 1);
    browser.eval("document.getElementById('explore-find-leader').click()");
    browser.wait("document.querySelectorAll('#explore-path li').length > 0");
    let steps = browser.eval("document.querySelectorAll('#explore-path li').length").as_u64().unwrap() as usize;
    let k = steps.min(3);
    browser.eval(&format!("document.querySelector('#explore-path li[data-k=\"{}\"]').click()", k - 1));
    at_depth(&mut browser, 1 + k);
    let done = browser.eval("document.querySelectorAll('#explore-path li.done').length").as_u64().unwrap() as usize;
    assert_eq!(done, k, "the path's steps up to the one clicked are taken");
    let said =
        text(&mut browser, &format!("document.querySelector('#explore-path li[data-k=\"{}\"]').textContent", k - 1));
    assert!(last_taken(&mut browser).starts_with(&said), "{said}");
    browser.eval("document.getElementById('explore').scrollIntoView()");
    shoot(&mut browser, "serve-explore-branches.png");
}

/// A student's program in Python, served with `--program`: the page offers it first, and Explore shows its
/// processes in its own words (the roles its view names) and each step's rule as the program named it.
#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn explore_shows_a_python_program_in_its_own_words() {
    let program = concat!("exec:", env!("CARGO_MANIFEST_DIR"), "/../../examples/python/chang_roberts.py");
    let server = Server::start(&["--program", program]);
    let mut browser = Browser::open(&server.url("/"));
    browser.wait("document.readyState === 'complete' && document.getElementById('limits').textContent !== ''");
    assert_eq!(text(&mut browser, "document.getElementById('form-explore').elements['algorithm'].value"), program);
    browser.eval("document.getElementById('tab-explore').click()");
    set(&mut browser, "explore", "nodes", "3");
    browser.eval("document.getElementById('run-explore').click()");
    browser.wait("document.querySelectorAll('#explore-canvas [data-card]').length === 3");
    let shown = explored(&mut browser);
    assert!(shown.matches("candidate").count() >= 3, "{shown}");
    let delivered = click_chip(&mut browser, 1);
    assert!(delivered.contains("\"type\":\"token\""), "{delivered}");
    let rule = text(&mut browser, "document.getElementById('explore-rule-name').textContent");
    assert!(["swallow a weaker token", "forward a stronger token"].contains(&rule.as_str()), "{rule}");
    assert!(last_taken(&mut browser).contains(&rule), "{}", last_taken(&mut browser));
    let shown = explored(&mut browser);
    assert!(shown.contains("lost") || rule == "swallow a weaker token", "{shown}");
    shoot(&mut browser, "serve-explore-program.png");
}
