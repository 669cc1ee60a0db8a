//! The book from `elect serve`'s page, in headless Chromium, at 1024×768 and at 1400×900: a property of Simulate's
//! report, the rule Explore applied, and the violation the viewer shows each link to their section of the book,
//! opening in a new tab; followed, the link shows the chapter, titled, at that section, fitting the window.
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
use page::{finished, text, viewport};
use server::Server;

/// The link `selector` finds in the page (`within`, a document): its address, which must be the book's, and that
/// it opens in a new tab.
fn book_link(browser: &mut Browser, within: &str, selector: &str) -> String {
    let link = format!("{within}.querySelector({selector:?})");
    browser.wait(&link);
    assert_eq!(text(browser, &format!("{link}.target")), "_blank", "{selector} opens a new tab");
    let href = text(browser, &format!("{link}.getAttribute('href')"));
    assert!(href.starts_with("/book/") && href.contains(".html#"), "{selector}: {href}");
    href
}

/// Follows `href` (a path of the server's) and checks the chapter it shows: titled `title`, its section `#…` there,
/// and no wider than the window.
fn follow(browser: &mut Browser, server: &Server, href: &str, title: &str) {
    browser.navigate(&server.url(href));
    browser.wait(&format!("document.title === {:?}", format!("{title} — the elect book")));
    let anchor = href.split_once('#').unwrap().1;
    let section = text(browser, &format!("document.getElementById({anchor:?}).tagName"));
    assert!(section.starts_with('H'), "{href}: #{anchor} is a heading ({section})");
    assert!(!text(browser, "document.querySelector('main h1').textContent").is_empty(), "{href}: a heading");
    let fits = text(browser, "String(document.documentElement.scrollWidth <= window.innerWidth)");
    assert_eq!(fits, "true", "{href}: no horizontal scrollbar");
    let contents = text(browser, "document.querySelector('nav a[href=\"/book/\"]').textContent");
    assert_eq!(contents, "Contents");
}

/// Opens the page at `hash` and waits for it to be ready.
fn open(browser: &mut Browser, server: &Server, hash: &str) {
    browser.navigate("about:blank");
    browser.navigate(&server.url(&format!("/{hash}")));
    browser.wait("document.readyState === 'complete' && document.getElementById('limits').textContent !== ''");
}

#[test]
#[ignore = "needs Chromium: run by scripts/test, or with --ignored after scripts/install-chromium"]
fn the_page_s_references_lead_to_the_book_s_sections() {
    let server = Server::start(&[]);
    let mut browser = Browser::open(&server.url("/"));
    for (width, height) in [(1024, 768), (1400, 900)] {
        viewport(&mut browser, width, height);

        // Simulate: each property of the report names its section of "Properties"; "at end" in words.
        open(&mut browser, &server, "#view=sim&algorithm=bully&nodes=3");
        finished(&mut browser, "sim");
        let properties = text(&mut browser, "document.getElementById('sim-properties').textContent");
        assert!(properties.contains("at end") && !properties.contains("at-end"), "{properties}");
        let href = book_link(&mut browser, "document", "#sim-properties a[href$='#agreement']");
        assert_eq!(href, "/book/reference/properties.html#agreement");
        follow(&mut browser, &server, &href, "Properties");

        // Check: the counterexample in the viewer, at its end, links the violated property.
        open(&mut browser, &server, "");
        browser.eval("document.getElementById('tab-check').click()");
        browser.eval("document.getElementById('form-check').elements['algorithm'].value = 'bully'");
        browser.eval("document.getElementById('form-check').elements['nodes'].value = '3'");
        browser.eval("document.getElementById('run-check').click()");
        finished(&mut browser, "check");
        let viewer = "document.getElementById('viewer-check').contentDocument";
        browser.wait(&format!("{viewer} && {viewer}.getElementById('last')"));
        browser.eval(&format!("{viewer}.getElementById('last').click()"));
        let href = book_link(&mut browser, viewer, "#violations a");
        assert_eq!(href, "/book/reference/properties.html#uniqueness");
        follow(&mut browser, &server, &href, "Properties");

        // Explore: the rule the last step applied, with the chapter that states it.
        open(&mut browser, &server, "");
        browser.eval("document.getElementById('tab-explore').click()");
        browser.eval("document.getElementById('form-explore').elements['algorithm'].value = 'bully'");
        browser.eval("document.getElementById('form-explore').elements['nodes'].value = '3'");
        browser.eval("document.getElementById('run-explore').click()");
        browser.wait("document.querySelectorAll('#explore-actions button').length > 0");
        browser.eval("document.getElementById('explore-find-violation').click()");
        browser.wait("document.querySelectorAll('#explore-path li').length > 0");
        let steps = text(&mut browser, "document.querySelectorAll('#explore-path li').length");
        for k in 1..=steps.parse::<usize>().unwrap() {
            browser.eval("document.getElementById('explore-follow').click()");
            browser.wait(&format!("document.body.dataset.exploreDepth === '{k}'"));
        }
        let href = book_link(&mut browser, "document", "#explore-rule-chapter a");
        assert_eq!(href, "/book/reference/algorithms/bully.html#rules-step-by-step");
        let chapter = text(&mut browser, "document.querySelector('#explore-rule-chapter a').textContent");
        assert_eq!(chapter, "reference/algorithms/bully.md");
        follow(&mut browser, &server, &href, "Bully");
    }
}
