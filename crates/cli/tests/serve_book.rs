//! `elect serve`'s book over HTTP: the index follows `docs/SUMMARY.md`, a chapter is served as HTML with its links
//! between chapters and its anchors, and nothing else is: an unknown chapter, and every path that tries to climb out
//! of the book, gets 404. And the API's answer to an unknown algorithm, on every endpoint that runs one: 400 naming
//! it and the known ones, as the command line says it.

#[path = "common/server.rs"]
mod server;

use server::{Server, elect};

#[test]
fn the_index_lists_every_chapter_of_the_summary() {
    let server = Server::start(&[]);
    let index = server.get("/book/");
    assert_eq!(index.status, 200, "{}", index.body);
    assert_eq!(index.header("content-type"), Some("text/html; charset=utf-8"));
    let summary = include_str!("../../../docs/SUMMARY.md");
    let mut listed = 0;
    for line in summary.lines() {
        let Some((name, rest)) = line.split_once("](") else { continue };
        let name = name.rsplit('[').next().unwrap();
        let path = rest.trim_end_matches(')').trim_end_matches(".md");
        let link = format!("<a href=\"/book/{path}.html\">{name}</a>");
        assert!(index.body.contains(&link), "{link} is not in the index");
        listed += 1;
    }
    assert!(listed > 50, "{listed} chapters");
    let moved = server.get("/book");
    assert_eq!((moved.status, moved.header("location")), (308, Some("/book/")));
}

#[test]
fn a_chapter_is_served_with_its_title_anchors_and_links_between_chapters() {
    let server = Server::start(&[]);
    let properties = server.get("/book/reference/properties.html");
    assert_eq!(properties.status, 200, "{}", properties.body);
    let html = &properties.body;
    assert!(html.contains("<title>Properties — the elect book</title>"), "{html}");
    assert!(html.contains("<h1 id=\"properties\">Properties</h1>"), "{html}");
    for anchor in ["safety", "liveness", "a4-prime", "majority-leader"] {
        assert!(html.contains(&format!("id=\"{anchor}\"")), "#{anchor}");
    }
    assert!(!html.contains(".md\""), "every link between chapters leads to a page here");
    let bully = server.get("/book/reference/algorithms/bully.html");
    assert_eq!(bully.status, 200);
    assert!(bully.body.contains("id=\"rules-step-by-step\""), "the section a rule names");
    assert!(
        bully.body.contains("href=\"/book/reference/bibliography.html#s001\""),
        "a link to a section of another chapter"
    );
    // An example reads as its readers see it: no test markup.
    let simulate = server.get("/book/guides/simulate.html").body;
    assert!(simulate.contains("$ elect sim") && !simulate.contains("[..]"), "{simulate}");
    let moved = server.get("/book/reference/properties.md");
    assert_eq!((moved.status, moved.header("location")), (308, Some("/book/reference/properties.html")));
}

#[test]
fn only_the_book_s_chapters_are_served() {
    let server = Server::start(&[]);
    for path in [
        "/book/nonesuch.html",
        "/book/../Cargo.toml",
        "/book/../../../../etc/passwd",
        "/book/%2e%2e/Cargo.toml",
        "/book/%2E%2E/%2E%2E/Cargo.toml",
        "/book/..%2f..%2fCargo.toml",
        "/book/reference/../../README.html",
        "/book/book.toml",
        "/book/SUMMARY.md",
        "/book/reference/protocol.schema.json",
        "/book/gallery/viewer.png",
        "/book/guides/serve.html%00",
    ] {
        let reply = server.get(path);
        assert_eq!(reply.status, 404, "{path}: {}", reply.body);
        assert!(reply.body.contains("the book has no such chapter"), "{path}: {}", reply.body);
        assert!(!reply.body.contains("[workspace]") && !reply.body.contains("root:"), "{path}: a file's content");
    }
    let long = format!("/book/{}.html", "a".repeat(4000));
    let reply = server.get(&long);
    assert_eq!(reply.status, 404);
    assert!(reply.body.len() < 400, "the path is not repeated at length: {} bytes", reply.body.len());
    let post = server.post("/book/introduction.html", "");
    assert_eq!((post.status, post.header("allow")), (405, Some("GET")));
    assert!(server.get("/nonesuch").body.contains("the book under /book/"));
}

/// Every endpoint that runs an algorithm answers an unknown one with 400, naming it and listing the known ones, as
/// `elect sim` does; never with what else the request lacks.
#[test]
fn an_unknown_algorithm_is_named_with_the_known_ones() {
    let server = Server::start(&[]);
    let (code, _, said) = elect(&["sim", "--algorithm", "nonesuch"]);
    assert_eq!(code, 2);
    assert!(said.starts_with("error: unknown algorithm 'nonesuch' (known: bully, "), "{said}");
    for path in [
        "/api/sim?algorithm=nonesuch",
        "/api/sim/view?algorithm=nonesuch",
        "/api/check?algorithm=nonesuch",
        "/api/check/view?algorithm=nonesuch",
        "/api/sweep?algorithms=nonesuch",
        "/api/sweep?algorithm=nonesuch",
        "/api/sweep?algorithms=bully,nonesuch&nodes=4",
        "/api/sim?algorithm=nonesuch&nodes=3&crash=9%400",
    ] {
        let reply = server.get(path);
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        assert_eq!(reply.body, said, "{path}");
    }
    let long = "x".repeat(5000);
    let reply = server.get(&format!("/api/sweep?algorithms={long}"));
    assert_eq!(reply.status, 400);
    assert!(reply.body.contains("unknown algorithm 'xxx") && reply.body.len() < 500, "{}", reply.body);
    // Known names go on to the sweep's other questions.
    let reply = server.get("/api/sweep?algorithms=bully,chang-roberts");
    assert!(reply.status == 400 && reply.body.contains("--nodes"), "{}", reply.body);
}
