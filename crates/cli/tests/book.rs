//! The examples of `README.md` and of the book (`docs/`), run against the `elect` binary, so that no page shows
//! what the tool no longer prints.
//!
//! Every ```` ```console ```` block is a test (trycmd's format): a line `$ elect ...` runs the command from the
//! repository's root, the lines after it are its standard output and error, `[..]` matches the rest of a line and
//! a line `...` any number of lines (for what varies, such as times measured on the clock), and `? 1` expects that
//! exit status. Commands shown without their output go in ```` ```sh ```` blocks, which are not run; so does
//! anything that needs a network, root or minutes. Examples that take too long for the default suite are marked
//! ```` ```console,ignore,slow ````: the default test skips them and the ignored one, which `scripts/test` runs,
//! runs them alone.
//!
//! After a deliberate change of output, `TRYCMD=overwrite cargo test -p elect --test book` rewrites the pages'
//! expected output for review.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `README.md` and every Markdown file of the book, in a fixed order.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut pages = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut pages);
    pages.sort();
    pages
}

/// The cases, run from the repository's root (examples name `scenarios/...` as a reader there would).
fn cases() -> trycmd::TestCases {
    std::env::set_current_dir(root()).unwrap();
    let cases = trycmd::TestCases::new();
    cases.register_bin("elect", trycmd::cargo::cargo_bin!("elect"));
    cases
}

#[test]
fn every_example_of_the_readme_and_the_book_prints_what_the_page_shows() {
    let cases = cases();
    for page in pages() {
        cases.case(page);
    }
    cases.run();
}

#[test]
#[ignore = "the slow examples of the book: scripts/test runs them"]
fn every_slow_example_prints_what_the_page_shows() {
    let dir = tempfile::tempdir().unwrap();
    let cases = cases();
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        if !text.contains("```console,ignore,slow") {
            continue;
        }
        // Only the slow blocks run: the others are already run by the default test.
        let text = text.replace("```console\n", "```text\n").replace("```console,ignore,slow\n", "```console\n");
        let name = page.strip_prefix(root()).unwrap().display().to_string().replace('/', "--");
        let copy = dir.path().join(name);
        fs::write(&copy, text).unwrap();
        cases.case(copy);
    }
    cases.run();
}
