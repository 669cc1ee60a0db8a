//! The book as its readers see it. Its ```` ```console ```` examples are tests (`crates/cli/tests/book.rs`, in
//! trycmd's format), and what makes them tests is markup a reader has no use for: `[..]` for the rest of a line
//! that varies, a line `...` for lines that vary, and `? 1` for the exit status expected. [`for_readers`] turns a
//! page into what a reader should see, and `elect book-preprocessor` applies it to every chapter as mdBook builds
//! the book (`docs/book.toml`, `scripts/book`).

use std::io::{self, Read, Write};

use clap::{Args, Subcommand};
use serde_json::Value;

use crate::outcome::{BadInput, Outcome};

/// A Markdown page as readers see it: inside ```` ```console ```` blocks (and ```` ```console,… ````, and trycmd's
/// ```` ```trycmd ````), `[..]` becomes `…`, a line `...` becomes `…`, and an exit-status line `? N` is dropped and
/// said in words on the command it belongs to, as a shell comment (`$ elect check -a bully -n 3  # exits with
/// status 1`). Everything outside those blocks is left as it is, byte for byte.
///
/// Pure (no I/O): mdBook's preprocessor (`elect book-preprocessor`) and `elect serve`'s pages of the book both
/// render pages through it.
pub fn for_readers(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fence: Option<Fence> = None;
    // Where the words for an exit status go: the end of the command line just written, before its line ending.
    let mut command_end: Option<usize> = None;
    for line in markdown.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let trimmed = body.trim_start();
        let indent = &body[..body.len() - trimmed.len()];
        match &fence {
            None => {
                fence = Fence::opening(trimmed);
                command_end = None;
                out.push_str(line);
            }
            Some(open) if open.closed_by(trimmed) => {
                fence = None;
                out.push_str(line);
            }
            Some(open) if !open.console => out.push_str(line),
            Some(_) => {
                if let Some(words) = exit_status(trimmed) {
                    match command_end {
                        Some(at) if !words.is_empty() => out.insert_str(at, &format!("  # {words}")),
                        Some(_) => {}
                        None if !words.is_empty() => {
                            out.push_str(&format!("{indent}# {words}{ending}"));
                        }
                        None => {}
                    }
                    command_end = None;
                    continue;
                }
                if trimmed.trim_end() == "..." {
                    out.push_str(&format!("{indent}…{ending}"));
                } else {
                    out.push_str(&line.replace("[..]", "…"));
                }
                let command = trimmed.starts_with("$ ") || trimmed.starts_with("> ");
                command_end = command.then(|| out.len() - ending.len());
            }
        }
    }
    out
}

/// An open fenced code block: its fence character, how many of them opened it, and whether it is an example.
struct Fence {
    char: char,
    count: usize,
    console: bool,
}

impl Fence {
    /// The fence a line (without its indentation) opens, if it opens one.
    fn opening(line: &str) -> Option<Self> {
        let char = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
        let count = line.len() - line.trim_start_matches(char).len();
        let info = line[count..].trim();
        if count < 3 || (char == '`' && info.contains('`')) {
            return None;
        }
        let language = info.split([',', ' ']).next().unwrap_or("");
        Some(Self { char, count, console: language == "console" || language == "trycmd" })
    }

    /// Whether a line (without its indentation) closes this fence.
    fn closed_by(&self, line: &str) -> bool {
        let line = line.trim_end();
        line.len() >= self.count && line.chars().all(|c| c == self.char)
    }
}

/// What an exit-status line of an example (`? 1`, `? failed`) says, in words; empty for `? success`, which is
/// what a reader expects anyway. `None` for any other line.
fn exit_status(line: &str) -> Option<String> {
    let status = line.trim_end().strip_prefix("? ")?.trim();
    match status {
        "success" => Some(String::new()),
        "failed" => Some("fails".to_owned()),
        _ if !status.is_empty() && status.bytes().all(|b| b.is_ascii_digit()) => {
            Some(format!("exits with status {status}"))
        }
        _ => None,
    }
}

/// `elect book-preprocessor`: mdBook's preprocessor protocol. mdBook first asks `elect book-preprocessor supports
/// RENDERER` (every renderer is: exit 0), then gives `[context, book]` as JSON on standard input and reads the
/// book back on standard output, every chapter's content through [`for_readers`].
#[derive(Args)]
pub(crate) struct PreprocessorArgs {
    #[command(subcommand)]
    question: Option<Question>,
}

#[derive(Subcommand)]
enum Question {
    /// Whether the preprocessor supports a renderer: it supports every one.
    Supports { renderer: String },
}

/// The most of standard input `elect book-preprocessor` reads: the whole book, as JSON.
const MAX_INPUT: u64 = 256 << 20;

pub(crate) fn preprocess(args: &PreprocessorArgs) -> anyhow::Result<Outcome> {
    if let Some(Question::Supports { .. }) = args.question {
        return Ok(Outcome::Held);
    }
    let mut input = Vec::new();
    io::stdin().lock().take(MAX_INPUT + 1).read_to_end(&mut input)?;
    if input.len() as u64 > MAX_INPUT {
        return Err(BadInput(format!("the book on standard input is larger than {MAX_INPUT} bytes")).into());
    }
    let book = rewrite_input(&input).map_err(BadInput)?;
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, &book)?;
    out.flush()?;
    Ok(Outcome::Held)
}

/// The book of mdBook's `[context, book]`, every chapter rewritten for readers; what is wrong with the input.
fn rewrite_input(input: &[u8]) -> Result<Value, String> {
    let expected = "expected mdBook's [context, book] as JSON on standard input";
    let value: Value = serde_json::from_slice(input).map_err(|e| format!("{expected}: {e}"))?;
    let Value::Array(mut pair) = value else {
        return Err(format!("{expected}: not an array"));
    };
    if pair.len() != 2 {
        return Err(format!("{expected}: an array of {} values", pair.len()));
    }
    let mut book = pair.pop().unwrap_or_default();
    rewrite_chapters(&mut book);
    Ok(book)
}

/// Every chapter's `content` under `value` through [`for_readers`], at any depth (a chapter's `sub_items`, and the
/// book's list of items whatever mdBook names it).
fn rewrite_chapters(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(chapter)) = map.get_mut("Chapter")
                && let Some(Value::String(content)) = chapter.get_mut("content")
            {
                *content = for_readers(content);
            }
            map.values_mut().for_each(rewrite_chapters);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_chapters),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_ellipses_and_exit_statuses_words() {
        let page = "Text [..] stays.\n\n```console\n$ elect check -a bully -n 3\n? 1\n...\nverdict     [..]\n  \
                    ...\n```\n";
        let expected = "Text [..] stays.\n\n```console\n$ elect check -a bully -n 3  # exits with status 1\n…\n\
                        verdict     …\n  …\n```\n";
        assert_eq!(for_readers(page), expected);
    }

    #[test]
    fn only_examples_are_rewritten() {
        let page = "```sh\nelect sim [..]\n? 1\n...\n```\n```rust\nlet x = &v[..];\n```\n? 2\n...\n";
        assert_eq!(for_readers(page), page);
        let tilde = "~~~console\n$ elect x\n? 2\n~~~\n```text\n? 2\n```\n";
        assert_eq!(for_readers(tilde), "~~~console\n$ elect x  # exits with status 2\n~~~\n```text\n? 2\n```\n");
    }

    #[test]
    fn info_strings_line_endings_and_indentation_are_kept() {
        let page = "  ```console,ignore,slow\r\n  $ elect cluster\r\n  ? 2\r\n  [..] ms\r\n  ```\r\n";
        let expected = "  ```console,ignore,slow\r\n  $ elect cluster  # exits with status 2\r\n  … ms\r\n  ```\r\n";
        assert_eq!(for_readers(page), expected);
        let trycmd = "```trycmd\n$ elect list\n? success\n```";
        assert_eq!(for_readers(trycmd), "```trycmd\n$ elect list\n```");
    }

    #[test]
    fn a_status_without_its_command_is_said_on_its_own_line() {
        let page = "```console\nsome output\n? 1\n? failed\n```\n";
        assert_eq!(for_readers(page), "```console\nsome output\n# exits with status 1\n# fails\n```\n");
    }

    #[test]
    fn a_longer_fence_closes_only_on_as_many_ticks() {
        let page = "````console\n$ elect a\n```\n? 1\n````\n? 1\n";
        assert_eq!(for_readers(page), "````console\n$ elect a\n```\n# exits with status 1\n````\n? 1\n");
    }

    #[test]
    fn every_chapter_of_the_book_is_rewritten_at_any_depth() {
        let chapter = |content: &str, sub: Value| {
            let chapter = serde_json::json!({"name": "x", "content": content, "sub_items": [sub]});
            serde_json::json!({ "Chapter": chapter })
        };
        let inner = chapter("```console\n[..]\n```\n", serde_json::json!("Separator"));
        let book = serde_json::json!([{"root": "."}, {"items": [chapter("```console\n...\n```\n", inner)]}]);
        let out = rewrite_input(book.to_string().as_bytes()).unwrap();
        let text = out.to_string();
        assert!(!text.contains("[..]") && !text.contains("...") && text.matches('…').count() == 2, "{text}");
        assert!(out.get("items").is_some() && out.get("root").is_none(), "{out}");
    }

    #[test]
    fn input_that_is_not_a_book_is_refused_with_a_reason() {
        for (input, reason) in [("", "EOF"), ("{}", "not an array"), ("[1]", "an array of 1 values")] {
            let e = rewrite_input(input.as_bytes()).unwrap_err();
            assert!(e.contains("[context, book]") && e.contains(reason), "{e}");
        }
    }
}
