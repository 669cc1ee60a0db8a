//! The reference chapters of the book (`docs/reference/`) speak the reader's language: what the tool does, its
//! flags and its output. The code's paths, constants and types belong in the internals part of the book
//! (`docs/internals/`), which says where each thing is.

use super::*;

/// The workspace's crates, as Rust code names them.
const CRATES: [&str; 7] =
    ["elect_core", "elect_algos", "elect_scenario", "elect_sim", "elect_check", "elect_viz", "elect_net"];

/// Environment variables, which are in capitals with underscores as constants are, by the prefixes readers meet.
const ENVIRONMENT: [&str; 9] = ["ELECT_", "RUST_", "CARGO_", "MDBOOK_", "SLURM_", "AWS_", "JOB_", "PROPTEST_", "CAP_"];

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A constant's name: capitals and digits in words joined by underscores, at least two of them longer than a letter
/// (`MAX_COVER_NODES`; not the subscripted `M_S` of a formula).
fn is_constant(word: &str) -> bool {
    let parts: Vec<&str> = word.split('_').collect();
    word.starts_with(|c: char| c.is_ascii_uppercase())
        && word.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && parts.iter().all(|p| !p.is_empty())
        && parts.iter().filter(|p| p.len() > 1).count() >= 2
}

/// A type's name in CamelCase of two humps or more (`RoundMsg`, `SyncSummary`).
fn is_type(span: &str) -> bool {
    let humps = span.char_indices().filter(|&(i, c)| i > 0 && c.is_ascii_uppercase()).count();
    span.starts_with(|c: char| c.is_ascii_uppercase())
        && span.chars().all(|c| c.is_ascii_alphanumeric())
        && span.chars().any(|c| c.is_ascii_lowercase())
        && humps >= 1
}

/// What in a line names the code: a path (`crate::rounds`, `Setup::diameter`), a crate of the workspace
/// (`elect_core`), a constant (`MAX_COVER_NODES`), a type alone in backticks (`RoundMsg`), or a range in Rust's
/// syntax (`1..=D'`).
fn code_names(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (start, c) = chars[k];
        if !is_word(c) {
            k += 1;
            continue;
        }
        let mut end_k = k;
        while end_k < chars.len() && is_word(chars[end_k].1) {
            end_k += 1;
        }
        let end = chars.get(end_k).map_or(line.len(), |&(i, _)| i);
        let word = &line[start..end];
        let rest = &line[end..];
        let before = line[..start].chars().next_back();
        if rest.starts_with("::") && rest[2..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let path: String = line[start..].chars().take_while(|&c| is_word(c) || c == ':').collect();
            found.push(path.trim_end_matches(':').to_owned());
            k = end_k + path[word.len()..].chars().count();
            continue;
        }
        let environment =
            ENVIRONMENT.iter().any(|p| word.starts_with(p)) || before == Some('$') || rest.starts_with('=');
        if CRATES.contains(&word) || (is_constant(word) && !environment) {
            found.push(word.to_owned());
        }
        k = end_k;
    }
    for (n, span) in line.split('`').enumerate() {
        if n % 2 == 1 && is_type(span) {
            found.push(span.to_owned());
        }
    }
    let mut rest = line;
    while let Some(at) = rest.find("..=") {
        let from = rest[..at].rfind(|c: char| c.is_whitespace() || c == '`' || c == '(').map_or(0, |i| i + 1);
        let to = rest[at..].find(|c: char| c.is_whitespace() || c == '`' || c == ')').map_or(rest.len(), |i| at + i);
        found.push(rest[from..to].to_owned());
        rest = &rest[to..];
    }
    found
}

#[test]
fn names_of_the_code_are_told_from_the_readers_words() {
    let line =
        "see `crate::rounds`, `Setup::diameter` and `elect_core::epoch`; `MAX_COVER_NODES`; `RoundMsg`; `1..=D'`";
    assert_eq!(
        code_names(line),
        ["crate::rounds", "Setup::diameter", "elect_core::epoch", "MAX_COVER_NODES", "RoundMsg", "1..=D'"]
    );
    assert_eq!(code_names("FloodMax (`Rounds::final_round`), `elect_sim` [..]"), ["Rounds::final_round", "elect_sim"]);
    for clean in [
        "the metric `elect_packets_dropped_total`, on http://[::1]:7000/status, `--param diameter=D'`",
        "`M_A = M_S + T_S · M(α)`, rounds `1..n`, `[..]`, `ELECT_CLUSTER_KEY`, `$SLURM_ARRAY_TASK_ID`, NORMAL",
        "FloodMax and OptFloodMax, `max{uid}`, `Port`, `elect-net`, `D' + 1`, `S003`, `P-Unique`, `A4′`",
    ] {
        assert_eq!(code_names(clean), Vec::<String>::new(), "{clean}");
    }
}

#[test]
fn the_reference_names_no_code() {
    let mut named = Vec::new();
    for file in markdown_under(&root().join("docs/reference")) {
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for code in code_names(line) {
                named.push(format!("{name}:{}: `{code}` in: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        named.is_empty(),
        "the reference names the code; say it in the reader's terms (what the tool does, its flags, its output), and \
         put the code's names in docs/internals/:\n{}",
        named.join("\n")
    );
}

/// The Markdown files under `dir`, in order.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(markdown_under(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}
