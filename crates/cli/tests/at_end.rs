//! One word for a property judged once nothing is left to happen: "at end". The report's JSON keeps its value,
//! `at-end`; what readers see says "at end": the page's views (the value turned into words where the page shows
//! it), the viewer, `elect sim`'s and `elect check`'s text, and the book outside its JSON examples (the checker's
//! JSON keeps `eventually`).

#[path = "common/server.rs"]
mod server;

use server::elect;

/// The page's and the viewer's code, by name.
const VIEWS: [(&str, &str); 5] = [
    ("page.html", include_str!("../src/serve/page.html")),
    ("live.js", include_str!("../src/serve/live.js")),
    ("viewer.js", include_str!("../../viz/assets/viewer.js")),
    ("canvas.js", include_str!("../../viz/assets/canvas.js")),
    ("html.rs", include_str!("../../viz/src/html.rs")),
];

#[test]
fn the_views_say_at_end() {
    for (name, code) in VIEWS {
        for line in code.lines().filter(|l| l.contains("at-end") || l.to_lowercase().contains("eventually")) {
            let comment = line.trim_start().starts_with("//");
            let words = line.contains(r#"? "at end""#);
            assert!(comment || words, "{name}: shows another word for \"at end\": {line}");
        }
    }
    let page = VIEWS[0].1;
    assert!(page.contains("esc(judged(when))"), "Simulate's properties say when in words");
}

#[test]
fn elect_sim_says_at_end_and_its_json_keeps_its_value() {
    let (code, text, stderr) = elect(&["sim", "--algorithm", "bully", "--nodes", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains("agreement held (at end)"), "{text}");
    assert!(!text.contains("at-end") && !text.contains("eventually"), "{text}");
    let (_, json, _) = elect(&["sim", "--algorithm", "bully", "--nodes", "3", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["properties"]["checked"]["agreement"], "at-end", "the JSON value stays");
}

#[test]
fn elect_check_says_at_end_and_its_json_keeps_its_value() {
    // Untimed Bully on three breaks a property: a verdict of each kind.
    let (code, text, stderr) = elect(&["check", "--algorithm", "bully", "--nodes", "3"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(text.contains("at end"), "{text}");
    assert!(!text.contains("at-end") && !text.contains("eventually"), "{text}");
    let (_, json, _) = elect(&["check", "--algorithm", "bully", "--nodes", "3", "--json"]);
    assert!(json.contains("\"eventually\""), "the JSON value stays: {json}");
}

#[test]
fn the_book_says_at_end_outside_its_json() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let mut read = 0;
    let mut dirs = vec![docs];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text.lines().filter(|l| l.contains("at-end")) {
                    assert!(line.contains("\"at-end\""), "{}: {line}", path.display());
                }
                read += 1;
            }
        }
    }
    assert!(read > 50, "{read} chapters read");
}
