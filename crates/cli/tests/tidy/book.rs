//! The README and the book: links and anchors resolve, citations name headings, code blocks say their language,
//! every algorithm has its chapter, and the README stays short.

use super::*;

/// The repository's own Markdown files (not those of build directories or of other projects).
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    walk(&path, out);
                }
            } else if name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root(), &mut files);
    files.sort();
    files
}

/// A Markdown file's lines outside fenced code blocks, with their numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = &trimmed[..trimmed.len() - trimmed.trim_start_matches(['`', '~']).len()];
        match fence {
            Some(open) if ticks.len() >= open.len() && ticks.starts_with(&open[..1]) => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => lines.push((n + 1, line)),
        }
    }
    lines
}

/// A line without its inline code spans (links inside them are examples, not links).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    for (k, part) in line.split('`').enumerate() {
        if k % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

/// The anchor GitHub and mdBook give a heading: its text without formatting, lower-cased, every character but
/// letters, digits, `-`, `_` and spaces dropped, and spaces made hyphens.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // A link keeps its text.
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a Markdown file: its headings' (a repeated heading gets `-1`, `-2`, ...) and its `<a id>`s.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (_, line) in prose(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(line[hashes..].trim());
            let count = seen.entry(base.clone()).or_default();
            found.insert(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
            *count += 1;
        }
        let mut rest = line;
        while let Some(at) = rest.find("<a id=\"") {
            let id = &rest[at + 7..];
            let end = id.find('"').unwrap_or(id.len());
            found.insert(id[..end].to_owned());
            rest = &id[end..];
        }
    }
    found
}

/// The destinations of a line's links and images, `[text](dest)`.
fn links(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut found = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let dest = &rest[at + 2..];
        let end = dest.find(')').unwrap_or(dest.len());
        let dest = dest[..end].split_whitespace().next().unwrap_or("");
        found.push(dest.trim_matches(['<', '>']).to_owned());
        rest = &rest[at + 2..];
    }
    found
}

/// Checks that `target` (a path from `base`'s directory, with an optional `#anchor`) names a file and a heading
/// of it that exist; returns what is wrong.
fn resolve(base: &Path, target: &str) -> Result<(), String> {
    let (path, anchor) = target.split_once('#').map_or((target, None), |(p, a)| (p, Some(a)));
    let file = if path.is_empty() { base.to_owned() } else { base.parent().unwrap().join(path) };
    if !file.exists() {
        return Err(format!("{} does not exist", file.display()));
    }
    match anchor {
        Some(anchor) if file.extension().is_some_and(|e| e == "md") => {
            let text = fs::read_to_string(&file).unwrap();
            if anchors(&text).contains(anchor) {
                Ok(())
            } else {
                Err(format!("{} has no heading with the anchor #{anchor}", file.display()))
            }
        }
        _ => Ok(()),
    }
}

#[test]
fn headings_make_the_anchors_github_and_mdbook_make() {
    assert_eq!(slug("The test suite"), "the-test-suite");
    assert_eq!(slug("`elect serve` and its HTTP API"), "elect-serve-and-its-http-api");
    assert_eq!(slug("a4-prime"), "a4-prime");
    assert_eq!(slug("Measuring failover: `elect cluster`"), "measuring-failover-elect-cluster");
    assert_eq!(slug("[Bully](bully.md), textbook"), "bully-textbook");
    let text = "# A\n## B\n```sh\n# not a heading\n```\n## B\n<a id=\"s000\"></a>\n";
    assert_eq!(anchors(text), ["a", "b", "b-1", "s000"].map(String::from).into());
}

#[test]
fn every_relative_link_and_anchor_of_the_markdown_files_resolves() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in prose(&text) {
            for dest in links(line) {
                if dest.is_empty() || dest.contains("://") || dest.starts_with("mailto:") {
                    continue;
                }
                if let Err(e) = resolve(&file, &dest) {
                    broken.push(format!("{}:{n}: ({dest}) {e}", file.strip_prefix(root()).unwrap().display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_citation_the_tool_prints_names_a_heading_of_the_book() {
    let readme = root().join("README.md");
    for &property in elect_core::Property::all() {
        let cite = property.source();
        assert!(cite.starts_with("docs/"), "{property} cites {cite}, not a section of the book");
        resolve(&readme, cite).unwrap_or_else(|e| panic!("{property} cites {cite}: {e}"));
    }
    // Any other citation in the code: a string naming a page of the book, with or without its anchor.
    let mut broken = Vec::new();
    for krate in ["core", "algos", "scenario", "sim", "check", "net", "viz", "grade", "cli"] {
        for file in rust_files(&root().join("crates").join(krate).join("src")) {
            let text = fs::read_to_string(&file).unwrap();
            let name = file.strip_prefix(root()).unwrap().display().to_string();
            for (n, line) in text.lines().enumerate() {
                // A specification the project was built from, which is not in the repository (spelt apart here so
                // that this file does not name it either).
                let outside = concat!("ALGORITHMS", ".md");
                assert!(!line.contains(outside), "{name}:{}: cites {outside}, which is not in the repository", n + 1);
                let mut rest = line;
                while let Some(at) = rest.find("docs/") {
                    let cite: String =
                        rest[at..].chars().take_while(|c| c.is_alphanumeric() || "/._-#".contains(*c)).collect();
                    rest = &rest[at + 5..];
                    let cite = cite.trim_end_matches('.');
                    // A bare `page.md#` is a prefix the code completes, not a citation.
                    if cite.contains(".md") && !cite.ends_with('#') {
                        if let Err(e) = resolve(&readme, cite) {
                            broken.push(format!("{name}:{}: {cite}: {e}", n + 1));
                        }
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "citations that name no section of the book:\n{}", broken.join("\n"));
}

/// The README is the front door: what elect is, how to run it, and links into the book.
const README_LINES: usize = 150;

#[test]
fn the_readme_stays_within_its_line_budget() {
    let lines = fs::read_to_string(root().join("README.md")).unwrap().lines().count();
    assert!(
        lines <= README_LINES,
        "README.md has {lines} lines, more than {README_LINES}: move the detail into the book"
    );
}

#[test]
fn every_algorithm_has_its_reference_chapter_in_the_book() {
    let summary = fs::read_to_string(root().join("docs/SUMMARY.md")).unwrap();
    for info in elect_algos::registry::all() {
        let chapter = format!("reference/algorithms/{}.md", info.name);
        assert!(root().join("docs").join(&chapter).is_file(), "{} has no chapter docs/{chapter}", info.name);
        assert!(summary.contains(&format!("({chapter})")), "docs/{chapter} is not in docs/SUMMARY.md");
    }
}

#[test]
fn every_code_block_of_the_readme_and_the_book_says_its_language() {
    // trycmd runs a block without an info string as an example, so a bare ``` must be ```text, ```sh, ...
    let mut bare = Vec::new();
    for file in markdown_files() {
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        if name != "README.md" && !name.starts_with("docs/") {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        let mut open = false;
        for (n, line) in text.lines().enumerate() {
            if let Some(info) = line.trim_start().strip_prefix("```") {
                if !open && info.trim().is_empty() {
                    bare.push(format!("{name}:{}", n + 1));
                }
                open = !open;
            }
        }
    }
    assert!(bare.is_empty(), "code blocks without a language (```text, ```sh, ```console, ...):\n{}", bare.join("\n"));
}
