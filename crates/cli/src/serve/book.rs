//! `GET /book/` and `GET /book/CHAPTER.html`: the book, for the page's references to it (a rule's chapter, a
//! property's section). Every chapter of `docs/SUMMARY.md` is compiled in, and only those are served: a path is
//! looked up, as it was sent, among the chapters' own paths, so no path reaches a file. A chapter is rendered as
//! its readers see it (`crate::book::for_readers`, the rewrite mdBook's build applies) with pulldown-cmark: its
//! headings get the anchors mdBook gives them, its links to other chapters lead to their pages here, and its links
//! to other files of the repository (and its figures, which are not compiled in) lead to the repository.

use elect_viz::escape;
use hyper::StatusCode;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use super::answer::Answer;

/// Where the book is served.
pub(crate) const ROOT: &str = "/book/";

/// The book's table of contents, whose links are the chapters in reading order.
const SUMMARY: &str = include_str!("../../../../docs/SUMMARY.md");

/// Each chapter's path in `docs/` and its Markdown, in the order of `docs/SUMMARY.md` (a test holds them to it).
macro_rules! chapters {
    ($($path:literal),* $(,)?) => { &[$(($path, include_str!(concat!("../../../../docs/", $path)))),*] };
}

const CHAPTERS: &[(&str, &str)] = chapters![
    "introduction.md",
    "tutorials/student.md",
    "tutorials/engineer.md",
    "tutorials/your-own-algorithm.md",
    "lectures/index.md",
    "lectures/bully-and-rings.md",
    "lectures/safety-and-timeouts.md",
    "lectures/timestamped-flooding.md",
    "lectures/rings-and-synchronizers.md",
    "lectures/garcia-molina-and-invitation.md",
    "lectures/answers.md",
    "guides/simulate.md",
    "guides/faults.md",
    "guides/pictures.md",
    "guides/check.md",
    "guides/sweeps.md",
    "guides/serve.md",
    "guides/cluster.md",
    "guides/deploy.md",
    "guides/voters.md",
    "guides/fencing.md",
    "guides/applications.md",
    "guides/leases.md",
    "guides/limits.md",
    "guides/teaching.md",
    "guides/grading.md",
    "reference/algorithms/index.md",
    "reference/algorithms/bully.md",
    "reference/algorithms/garcia-molina.md",
    "reference/algorithms/invitation.md",
    "reference/algorithms/lelann.md",
    "reference/algorithms/chang-roberts.md",
    "reference/algorithms/ring-participant.md",
    "reference/algorithms/hirschberg-sinclair.md",
    "reference/algorithms/franklin.md",
    "reference/algorithms/peterson.md",
    "reference/algorithms/floodmax.md",
    "reference/algorithms/opt-floodmax.md",
    "reference/algorithms/sync-lcr.md",
    "reference/algorithms/ad-hoc.md",
    "reference/algorithms/timestamp-flooding.md",
    "reference/properties.md",
    "reference/rounds.md",
    "reference/synchronizers/index.md",
    "reference/synchronizers/abd.md",
    "reference/synchronizers/alpha.md",
    "reference/synchronizers/beta-gamma.md",
    "reference/simulator.md",
    "reference/trace.md",
    "reference/cli.md",
    "reference/wire.md",
    "reference/protocol.md",
    "reference/bibliography.md",
    "internals/architecture.md",
    "internals/member.md",
    "internals/monitor.md",
    "internals/simulator-speed.md",
    "internals/checker.md",
    "internals/reference-in-code.md",
];

/// Where the repository's files are read, for a chapter's links to files that are not chapters.
const REPOSITORY: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/");

/// The longest part of a requested path an error repeats.
const SHOWN: usize = 100;

/// The stylesheet of every page: a column of text, tables and code readable at any width.
const STYLE: &str = "body{font:16px/1.55 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1f2328;margin:0;\
background:#fff}main{max-width:48rem;margin:0 auto;padding:1rem 1.25rem 4rem}nav{display:flex;gap:1rem;\
flex-wrap:wrap;justify-content:space-between;max-width:48rem;margin:0 auto;padding:.75rem 1.25rem;\
border-bottom:1px solid #d0d7de;font-size:.95rem}a{color:#0550ae}h1,h2,h3{line-height:1.25;margin:1.6em 0 .5em}\
h1{font-size:1.9rem}h2{font-size:1.45rem;border-bottom:1px solid #eaeef2;padding-bottom:.2em}\
code{font:.88em/1.4 ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;background:#f3f4f6;\
padding:.1em .3em;border-radius:4px}pre{background:#f6f8fa;padding:.8rem 1rem;overflow-x:auto;border-radius:6px}\
pre code{background:none;padding:0}table{border-collapse:collapse;display:block;overflow-x:auto;margin:1rem 0}\
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;vertical-align:top}th{background:#f6f8fa}\
blockquote{margin:1rem 0;padding:0 1rem;border-left:4px solid #d0d7de;color:#57606a}\
ul.parts{list-style:none;padding-left:0}.figure{font-style:italic}";

/// Whether `path` is the book's.
pub(crate) fn serves(path: &str) -> bool {
    path == "/book" || path.starts_with(ROOT)
}

/// The answer to a request for `path` (one [`serves`]), by a method that reads (`get`) or not.
pub(crate) fn answer(get: bool, path: &str) -> Answer {
    if !get {
        return Answer::error(StatusCode::METHOD_NOT_ALLOWED, format!("method not allowed on {}", shown(path)))
            .with("allow", "GET".into());
    }
    let rest = path.strip_prefix(ROOT).unwrap_or_default();
    if path == "/book" {
        return moved(ROOT.into());
    }
    if rest.is_empty() || rest == "index.html" {
        let contents = SUMMARY.replacen("# Summary", "# The elect book", 1);
        return page("Contents", &render("SUMMARY.md", &contents), None);
    }
    if let Some(stem) = rest.strip_suffix(".md")
        && chapter(&format!("{stem}.md")).is_some()
    {
        return moved(format!("{ROOT}{stem}.html"));
    }
    let found = rest.strip_suffix(".html").and_then(|stem| chapter(&format!("{stem}.md")));
    match found {
        Some(at) => {
            let (path, text) = CHAPTERS[at];
            page(name(at), &render(path, text), Some(at))
        }
        None => Answer::error(
            StatusCode::NOT_FOUND,
            format!("not found: {}: the book has no such chapter (its chapters are listed at {ROOT})", shown(path)),
        ),
    }
}

/// The index in [`CHAPTERS`] of the chapter at `path` (in `docs/`), if it is one.
fn chapter(path: &str) -> Option<usize> {
    CHAPTERS.iter().position(|(p, _)| *p == path)
}

/// A requested path as an error repeats it: at most [`SHOWN`] characters.
fn shown(path: &str) -> String {
    match path.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &path[..at]),
        None => path.to_owned(),
    }
}

/// 308 to `location`.
fn moved(location: String) -> Answer {
    Answer::error(StatusCode::PERMANENT_REDIRECT, format!("moved to {location}")).with("location", location)
}

/// The chapter at `at` as the contents name it (`docs/SUMMARY.md`): shorter than its heading.
fn name(at: usize) -> &'static str {
    let path = CHAPTERS[at].0;
    let link = format!("]({path})");
    SUMMARY
        .lines()
        .find_map(|line| line.find(&link).and_then(|end| line[..end].rsplit_once('[')).map(|(_, name)| name))
        .unwrap_or(path)
}

/// The Markdown features mdBook renders the book with.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// The plain text of a heading, up to its end, from the events after its start.
fn heading_text<'a>(events: &mut impl Iterator<Item = Event<'a>>) -> String {
    let mut text = String::new();
    for event in events {
        match event {
            Event::End(TagEnd::Heading(_)) => break,
            Event::Text(t) | Event::Code(t) => text.push_str(&t),
            _ => {}
        }
    }
    text
}

/// The anchor mdBook (and GitHub) give a heading: its text lower-cased, every character but letters, digits, `-`,
/// `_` and spaces dropped, and spaces made hyphens.
fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The chapter at `path` (in `docs/`) as HTML, for readers.
fn render(path: &str, markdown: &str) -> String {
    let markdown = crate::book::for_readers(markdown);
    let mut events: Vec<Event> = Parser::new_ext(&markdown, options()).collect();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for at in 0..events.len() {
        if let Event::Start(Tag::Heading { id: None, .. }) = &events[at] {
            let base = slug(&heading_text(&mut events[at + 1..].iter().cloned()));
            let count = seen.entry(base.clone()).or_default();
            let anchor = if *count == 0 { base } else { format!("{base}-{count}") };
            *count += 1;
            if let Event::Start(Tag::Heading { id, .. }) = &mut events[at] {
                *id = Some(anchor.into());
            }
        }
    }
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, links(path, events).into_iter());
    html
}

/// `events` with every link's destination as [`link`] gives it, and every figure (they are not compiled in) a link
/// to its file named by its description (or, inside a link, that description alone).
fn links<'a>(path: &str, events: Vec<Event<'a>>) -> Vec<Event<'a>> {
    let mut out = Vec::with_capacity(events.len());
    let mut depth = 0_usize;
    let mut figures = Vec::new();
    for event in events {
        match event {
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                depth += 1;
                out.push(Event::Start(Tag::Link { link_type, dest_url: link(path, &dest_url).into(), title, id }));
            }
            Event::End(TagEnd::Link) => {
                depth = depth.saturating_sub(1);
                out.push(Event::End(TagEnd::Link));
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                figures.push(depth == 0);
                if depth == 0 {
                    out.push(Event::Start(Tag::Link { link_type, dest_url: link(path, &dest_url).into(), title, id }));
                }
                out.push(Event::Text(CowStr::from("Figure: ")));
            }
            Event::End(TagEnd::Image) => {
                if figures.pop() == Some(true) {
                    out.push(Event::End(TagEnd::Link));
                }
            }
            event => out.push(event),
        }
    }
    out
}

/// Where a link of the chapter at `from` (in `docs/`) to `dest` leads on this server: another chapter's page (its
/// anchor kept), or the repository's copy of a file that is not a chapter; an address elsewhere, or an anchor of
/// the same page, as it is.
fn link(from: &str, dest: &str) -> String {
    if dest.is_empty() || dest.starts_with('#') || dest.starts_with('/') || dest.contains(':') {
        return dest.to_owned();
    }
    let (target, anchor) = dest.split_once('#').map_or((dest, None), |(t, a)| (t, Some(a)));
    let mut parts: Vec<&str> = std::iter::once("docs").chain(from.split('/')).collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return dest.to_owned();
                }
            }
            part => parts.push(part),
        }
    }
    let path = parts.join("/");
    let anchor = anchor.map(|a| format!("#{a}")).unwrap_or_default();
    match path.strip_prefix("docs/").filter(|p| chapter(p).is_some()) {
        Some(chapter) => format!("{ROOT}{}.html{anchor}", chapter.trim_end_matches(".md")),
        None => format!("{REPOSITORY}{path}{anchor}"),
    }
}

/// What a page may load: nothing but its own style (the book's pages run no script and fetch nothing).
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// A page of the book: `body` under `title`, between the links to the contents and, for the chapter `at`, to the
/// chapters before and after it.
fn page(title: &str, body: &str, at: Option<usize>) -> Answer {
    let mut nav = format!("<a href=\"{ROOT}\">Contents</a>");
    if let Some(at) = at {
        let name = |i: usize| format!("{ROOT}{}.html\">{}", CHAPTERS[i].0.trim_end_matches(".md"), escape(name(i)));
        let before = at.checked_sub(1).map(|i| format!("<a rel=\"prev\" href=\"{}</a>", name(i)));
        let after = CHAPTERS.get(at + 1).map(|_| format!("<a rel=\"next\" href=\"{}</a>", name(at + 1)));
        nav = format!("<span>← {}</span>{nav}<span>{} →</span>", before.unwrap_or_default(), after.unwrap_or_default());
    }
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width, initial-scale=1\"><title>{} — the elect book</title><style>{STYLE}</style>\
         </head>\n<body><nav>{nav}</nav>\n<main>\n{body}</main>\n<nav>{nav}</nav></body></html>\n",
        escape(title)
    );
    Answer {
        status: StatusCode::OK,
        content_type: "text/html; charset=utf-8",
        body: html.into_bytes(),
        headers: vec![("content-security-policy", POLICY.into())],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(answer: &Answer) -> &str {
        std::str::from_utf8(&answer.body).unwrap()
    }

    /// The links of `html` (`href="..."`).
    fn hrefs(html: &str) -> Vec<&str> {
        html.split("href=\"").skip(1).filter_map(|rest| rest.split('"').next()).collect()
    }

    #[test]
    fn the_chapters_are_the_summary_s_in_its_order() {
        let listed: Vec<&str> = SUMMARY
            .lines()
            .filter_map(|line| line.split_once("](").and_then(|(_, rest)| rest.split(')').next()))
            .collect();
        let compiled: Vec<&str> = CHAPTERS.iter().map(|(path, _)| *path).collect();
        assert_eq!(compiled, listed);
        assert_eq!(name(0), "Introduction");
        assert_eq!(name(chapter("reference/synchronizers/alpha.md").unwrap()), "α");
    }

    #[test]
    fn links_lead_to_chapters_here_and_to_other_files_in_the_repository() {
        let from = "reference/algorithms/bully.md";
        assert_eq!(link(from, "../properties.md#safety"), "/book/reference/properties.html#safety");
        assert_eq!(link(from, "garcia-molina.md"), "/book/reference/algorithms/garcia-molina.html");
        assert_eq!(link(from, "./../../guides/check.md"), "/book/guides/check.html");
        assert_eq!(link(from, "#rules-step-by-step"), "#rules-step-by-step");
        assert_eq!(link(from, "https://example.org/x.md"), "https://example.org/x.md");
        assert_eq!(link(from, "../../../README.md#install"), format!("{REPOSITORY}README.md#install"));
        assert_eq!(link(from, "../../gallery/x.svg"), format!("{REPOSITORY}docs/gallery/x.svg"));
        assert_eq!(link(from, "../../../../../etc/passwd"), "../../../../../etc/passwd", "outside the repository");
        assert!(REPOSITORY.starts_with("https://") && REPOSITORY.ends_with("/blob/main/"), "{REPOSITORY}");
    }

    #[test]
    fn every_link_between_chapters_leads_to_a_served_page_and_anchor() {
        let pages: Vec<(&str, String)> = CHAPTERS.iter().map(|(path, text)| (*path, render(path, text))).collect();
        let mut checked = 0;
        for (from, html) in &pages {
            for href in hrefs(html).into_iter().filter(|h| h.starts_with(ROOT)) {
                let (page, anchor) = href.split_once('#').map_or((href, None), |(p, a)| (p, Some(a)));
                let path = format!("{}.md", page[ROOT.len()..].trim_end_matches(".html"));
                let target = pages.iter().find(|(p, _)| *p == path);
                let Some((_, target)) = target else { panic!("{from}: {href} is no chapter") };
                if let Some(anchor) = anchor {
                    let id = format!("id=\"{anchor}\"");
                    assert!(target.contains(&id), "{from}: {href}: no {id} there");
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked} links between chapters");
    }

    #[test]
    fn headings_get_mdbook_s_anchors_and_examples_read_as_readers_see_them() {
        let html = render("reference/properties.md", chapter_text("reference/properties.md"));
        for id in ["safety", "a4-prime", "majority-leader", "who-promises-what"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "#{id}");
        }
        let html = render("x.md", "# A `b` *c*\n\n## Again\n\n## Again\n\n```console\n$ elect x\n? 2\n[..]\n```\n");
        assert!(html.contains("<h1 id=\"a-b-c\">") && html.contains("id=\"again-1\""), "{html}");
        assert!(html.contains("elect x  # exits with status 2") && html.contains('…') && !html.contains("[..]"));
        let figure = render("guides/pictures.md", "![A tree](../gallery/t.svg) and [![inner](i.png)](x.md)");
        assert!(figure.contains(&format!("<a href=\"{REPOSITORY}docs/gallery/t.svg\">Figure: A tree</a>")), "{figure}");
        assert!(!figure.contains("<img") && figure.contains(">Figure: inner</a>"), "{figure}");
    }

    fn chapter_text(path: &str) -> &'static str {
        CHAPTERS[chapter(path).unwrap()].1
    }

    #[test]
    fn every_algorithm_s_rules_have_their_section_s_anchor() {
        for (path, _) in CHAPTERS.iter().filter(|(_, text)| text.contains(elect_algos::book::SECTION)) {
            assert!(render(path, chapter_text(path)).contains("id=\"rules-step-by-step\""), "{path}");
        }
        let (path, _) = elect_algos::book::own_rules("bully").unwrap();
        assert!(chapter(path).is_some(), "{path}");
    }

    #[test]
    fn the_index_and_the_chapters_are_served_and_nothing_else() {
        let index = answer(true, "/book/");
        assert_eq!(index.status, StatusCode::OK);
        assert!(body(&index).contains("href=\"/book/reference/algorithms/bully.html\">Bully</a>"));
        assert_eq!(body(&answer(true, "/book/index.html")), body(&index));
        let bully = answer(true, "/book/reference/algorithms/bully.html");
        assert_eq!(bully.status, StatusCode::OK);
        assert!(body(&bully).contains("<title>Bully — the elect book</title>"), "{}", body(&bully));
        assert!(body(&bully).contains("rel=\"next\" href=\"/book/reference/algorithms/garcia-molina.html\""));
        assert!(bully.headers.iter().any(|(k, v)| *k == "content-security-policy" && v.contains("'none'")));
        for (path, to) in [("/book", "/book/"), ("/book/guides/serve.md", "/book/guides/serve.html")] {
            let moved = answer(true, path);
            assert_eq!(moved.status, StatusCode::PERMANENT_REDIRECT, "{path}");
            assert_eq!(moved.headers, [("location", to.to_owned())], "{path}");
        }
        for path in [
            "/book/../Cargo.toml",
            "/book/%2e%2e/Cargo.toml",
            "/book/..%2fCargo.toml",
            "/book/reference/../../Cargo.toml.html",
            "/book/reference/../introduction.html",
            "/book/SUMMARY.html",
            "/book/book.toml",
            "/book/reference/protocol.schema.json",
            "/book//introduction.html",
            "/book/introduction.html/",
            "/book/INTRODUCTION.html",
        ] {
            let refused = answer(true, path);
            assert_eq!(refused.status, StatusCode::NOT_FOUND, "{path}");
            assert!(body(&refused).contains("the book has no such chapter"), "{path}");
        }
        let long = format!("/book/{}", "a".repeat(10_000));
        assert!(body(&answer(true, &long)).len() < 400);
        assert_eq!(answer(false, "/book/introduction.html").status, StatusCode::METHOD_NOT_ALLOWED);
    }
}
