//! The size budget: no file or function over it without a comment saying why.

use super::*;

/// The most lines of code a source file has (those before its test module) and the most lines a function has,
/// unless a comment says why it is longer: `// Long:` and the reason, among the file's first lines for a file, in
/// the comments right above a function for a function.
const FILE_BUDGET: usize = 800;
const FN_BUDGET: usize = 80;
const LONG: &str = "// Long:";

/// Every Rust file of the workspace's crates and examples: sources, tests and benchmarks.
fn workspace_rust_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for parent in ["crates", "examples"] {
        for member in fs::read_dir(root().join(parent)).unwrap() {
            let member = member.unwrap().path();
            for part in ["src", "tests", "benches"] {
                if member.join(part).is_dir() {
                    files.extend(rust_files(&member.join(part)));
                }
            }
        }
    }
    files
}

/// Each line's change in brace depth, and whether it holds a `;` or a `{`, outside strings, characters and
/// comments (raw strings and strings that span lines included).
fn braces(text: &str) -> Vec<(i64, bool, bool)> {
    #[derive(Clone, Copy, PartialEq)]
    enum In {
        Code,
        Str,
        Raw(usize),
        Block,
    }
    let mut state = In::Code;
    let mut out = Vec::new();
    for line in text.lines() {
        let (mut depth, mut semi, mut open) = (0, false, false);
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match state {
                In::Str => match b[i] {
                    b'\\' => i += 1,
                    b'"' => state = In::Code,
                    _ => {}
                },
                In::Raw(hashes) => {
                    if b[i] == b'"' && b[i + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes {
                        state = In::Code;
                        i += hashes;
                    }
                }
                In::Block => {
                    if b[i..].starts_with(b"*/") {
                        state = In::Code;
                        i += 1;
                    }
                }
                In::Code => {
                    if b[i..].starts_with(b"//") {
                        break;
                    } else if b[i..].starts_with(b"/*") {
                        state = In::Block;
                    } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) {
                        let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                        if b.get(i + 1 + hashes) == Some(&b'"') {
                            state = In::Raw(hashes);
                            i += 1 + hashes;
                        }
                    } else if b[i] == b'"' {
                        state = In::Str;
                    } else if b[i] == b'\'' {
                        // A character literal ('{', '\''), not a lifetime ('a).
                        if b.get(i + 1) == Some(&b'\\') {
                            i += 2;
                            while i < b.len() && b[i] != b'\'' {
                                i += 1;
                            }
                        } else if b.get(i + 2) == Some(&b'\'') {
                            i += 2;
                        }
                    } else if b[i] == b'{' {
                        depth += 1;
                        open = true;
                    } else if b[i] == b'}' {
                        depth -= 1;
                    } else if b[i] == b';' {
                        semi = true;
                    }
                }
            }
            i += 1;
        }
        out.push((depth, semi, open));
    }
    out
}

/// The name of the function a line declares, if it declares one.
fn declares(line: &str) -> Option<&str> {
    let mut words = code(line).split_whitespace().peekable();
    while let Some(word) = words.next() {
        match word {
            "pub" | "pub(crate)" | "pub(super)" | "const" | "async" | "unsafe" | "extern" | "\"C\"" | "default" => {}
            "fn" => return words.next().map(|w| w.split(['(', '<']).next().unwrap_or(w)),
            _ => return None,
        }
    }
    None
}

/// The functions of `text` longer than the budget with no reason given: (line, name, lines).
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let depths = braces(text);
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = declares(line) else { continue };
        let (mut depth, mut end, mut body) = (0, None, false);
        for (j, &(d, semi, open)) in depths.iter().enumerate().skip(i) {
            if !body && semi && !open {
                break;
            }
            body |= open;
            depth += d;
            if body && depth <= 0 {
                end = Some(j);
                break;
            }
        }
        let Some(end) = end else { continue };
        let length = end - i + 1;
        let above = lines[..i].iter().rev().take_while(|l| {
            let l = l.trim_start();
            l.starts_with("//") || l.starts_with("#[")
        });
        if length > FN_BUDGET && !above.into_iter().any(|l| l.contains(LONG)) {
            found.push((i + 1, name.to_owned(), length));
        }
    }
    found
}

/// The lines of code of a file: those before its test module.
fn code_length(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    lines.windows(2).position(|w| w[0] == "#[cfg(test)]" && w[1].starts_with("mod ")).unwrap_or(lines.len())
}

#[test]
fn the_size_budget_finds_long_functions_and_their_reasons() {
    let body = "    let x = '{';\n    let s = \"}}\";\n    let r = r#\"{\"a\": 1}\"#;\n".repeat(30);
    let long = format!("fn long() {{\n{body}}}\n");
    assert_eq!(long_functions(&long), [(1, "long".to_owned(), 92)]);
    assert!(long_functions(&format!("// Long: a table of cases.\n{long}")).is_empty());
    assert!(
        long_functions(&format!("fn short() {{\n}}\ntrait T {{\n    fn f(&self);\n}}\n{}", "\n".repeat(90))).is_empty()
    );
    assert_eq!(code_length("a\nb\n#[cfg(test)]\nmod tests {\n}\n"), 2);
}

#[test]
fn no_file_or_function_is_over_the_size_budget_without_a_reason() {
    let mut found = Vec::new();
    for file in workspace_rust_files() {
        let text = fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root()).unwrap().display();
        let length = code_length(&text);
        if length > FILE_BUDGET && !text.lines().take(20).any(|l| l.contains(LONG)) {
            found.push(format!("{name}: {length} lines of code (the budget is {FILE_BUDGET})"));
        }
        for (line, function, length) in long_functions(&text) {
            found.push(format!("{name}:{line}: fn {function} has {length} lines (the budget is {FN_BUDGET})"));
        }
    }
    assert!(
        found.is_empty(),
        "over the size budget, with no `{LONG} reason` comment (split it, or say why it is long):\n{}",
        found.join("\n")
    );
}
