//! `elect sim --svg/--topology-svg/--html/--shiviz` end to end: files written, bad input refused with status 2.

use std::process::{Command, Output};

fn elect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_elect")).args(args).output().expect("elect runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn every_picture_is_written_and_the_trace_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let run = ["sim", "-a", "timestamp-flooding", "-t", "grid:3x3", "--crash", "9@0"];
    let plain = elect(&[&run[..], &["--trace", &path("plain.jsonl")]].concat());
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    let pictures = [
        "--trace",
        &path("trace.jsonl"),
        "--svg",
        &path("st.svg"),
        "--topology-svg",
        &path("topology.svg"),
        "--html",
        &path("viewer.html"),
        "--shiviz",
        &path("run.shiviz"),
    ];
    let o = elect(&[&run[..], &pictures[..]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let read = |name: &str| std::fs::read_to_string(path(name)).unwrap();
    assert_eq!(read("trace.jsonl"), read("plain.jsonl"), "the pictures see the trace without changing it");
    assert!(read("st.svg").starts_with("<svg") && read("st.svg").contains("cfl <tspan class=\"count\">("));
    assert!(read("topology.svg").contains("marker-end=\"url(#p)\""), "the tree's parent arrows are drawn");
    assert!(read("viewer.html").starts_with("<!DOCTYPE html>"));
    let log = read("run.shiviz");
    assert!(log.starts_with(&format!("{}\n\n", elect_viz::SHIVIZ_REGEX)));
    // What ShiViz's default expression reads: an event line, then the host and its clock as a JSON object that
    // counts the host's own events.
    let lines: Vec<&str> = log.lines().skip(2).collect();
    assert!(lines.len() > 20 && lines.len() % 2 == 0);
    for pair in lines.chunks(2) {
        let (host, clock) = pair[1].split_once(' ').unwrap();
        let clock: serde_json::Value = serde_json::from_str(clock).unwrap();
        assert!(clock[host].as_u64().is_some_and(|c| c >= 1), "{}", pair[1]);
    }
    // The same seed draws the same bytes.
    let (svg2, html2) = (path("st2.svg"), path("viewer2.html"));
    assert_eq!(elect(&[&run[..], &["--svg", &svg2, "--html", &html2]].concat()).status.code(), Some(0));
    assert_eq!(read("st.svg"), read("st2.svg"));
    assert_eq!(read("viewer.html"), read("viewer2.html"));
}

#[test]
fn pictures_of_a_violated_run_are_still_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("bug.svg");
    let o = elect(&[
        "sim",
        "-a",
        "chang-roberts",
        "-n",
        "8",
        "--ids",
        "random",
        "--param",
        "bug=forward-smaller",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("stroke-dasharray=\"1 2\""), "violations are marked");
}

#[test]
fn bad_picture_requests_exit_with_status_2() {
    let o = elect(&["sim", "-a", "lelann", "-n", "4", "--svg", "/nonexistent-dir/x.svg"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error: cannot create the picture /nonexistent-dir/x.svg"), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("big.html");
    let o = elect(&["sim", "-a", "chang-roberts", "-n", "1001", "--html", html.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--html: the HTML viewer shows at most 1000 processes"), "{}", stderr(&o));
}

#[test]
fn help_describes_every_picture_flag() {
    let help = String::from_utf8(elect(&["sim", "--help"]).stdout).unwrap();
    for flag in ["--svg <FILE>", "--topology-svg <FILE>", "--html <FILE>", "--shiviz <FILE>"] {
        assert!(help.contains(flag), "{flag} in:\n{help}");
    }
}

#[test]
fn the_lecture_s_label_file_names_every_picture_s_kinds_as_the_notes_do() {
    let dir = tempfile::tempdir().unwrap();
    let labels = concat!(env!("CARGO_MANIFEST_DIR"), "/../../labels/s004.toml");
    let map = elect_viz::Labels::parse(&std::fs::read_to_string(labels).unwrap()).unwrap();
    let mut named = std::collections::BTreeSet::new();
    for scenario in ["garcia-molina-typical", "invitation-merge"] {
        let svg = dir.path().join(format!("{scenario}.svg"));
        let html = dir.path().join(format!("{scenario}.html"));
        let o = elect(&[
            "sim",
            "--scenario",
            scenario,
            "--labels",
            labels,
            "--svg",
            &svg.display().to_string(),
            "--html",
            &html.display().to_string(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let svg = std::fs::read_to_string(svg).unwrap();
        let html = std::fs::read_to_string(html).unwrap();
        for (kind, label) in &map.messages {
            if svg.contains(&format!(">{label} <tspan class=\"count\">(")) {
                named.insert(kind.clone());
                assert!(!svg.contains(&format!(">{kind} <tspan")), "{kind} is still named in {scenario}'s legend");
                assert!(html.contains(&format!("\"{kind}\":\"{label}\"")), "the viewer of {scenario} gets the map");
            }
        }
    }
    let all: std::collections::BTreeSet<String> = map.messages.keys().cloned().collect();
    assert_eq!(named, all, "every label of the file names a kind these runs send");
    // The flag's words take precedence over the file's, and a bad word is refused before the run.
    let svg = dir.path().join("own.svg");
    let o = elect(&[
        "sim",
        "--scenario",
        "garcia-molina-typical",
        "--labels",
        labels,
        "--label",
        "halt=STOP",
        "--svg",
        &svg.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&svg).unwrap().contains(">STOP <tspan class=\"count\">(6)</tspan><"));
    for (flag, value, said) in [
        ("--label", "Halt=x", "'Halt' is not a message kind"),
        ("--label", "halt", "KIND=LABEL"),
        ("--labels", "/nonexistent/labels.toml", "label file"),
    ] {
        let o = elect(&["sim", "-a", "bully", "-n", "3", flag, value]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{flag} {value}: {}", stderr(&o));
    }
}

#[test]
fn the_gallery_is_what_scripts_gallery_draws() {
    // Every `elect sim` line of scripts/gallery (a `\` continues a line; words are split on spaces, quotes
    // dropped), run with its pictures written to a temporary directory instead of docs/gallery, then compared
    // byte for byte with the gallery's copies.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = std::fs::read_to_string(root.join("scripts/gallery")).unwrap().replace("\\\n", " ");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let mut pictures = 0;
    for line in script.lines().map(str::trim).filter(|l| l.starts_with("elect sim ")) {
        let words: Vec<String> =
            line["elect ".len()..].split_whitespace().map(|w| w.trim_matches('"').replace("$out", &out)).collect();
        assert!(!line.contains("$scenario"), "one command a line, no loop variables: {line}");
        let o = Command::new(env!("CARGO_BIN_EXE_elect")).current_dir(&root).args(&words).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{line}: {}", stderr(&o));
        for written in words.iter().filter(|w| w.starts_with(&out)) {
            let name = std::path::Path::new(written).file_name().unwrap();
            let kept = std::fs::read(root.join("docs/gallery").join(name)).unwrap();
            let drawn = std::fs::read(written).unwrap();
            assert!(
                kept == drawn,
                "docs/gallery/{} is not what `{line}` draws now: run scripts/gallery",
                name.display()
            );
            pictures += 1;
        }
    }
    assert!(pictures >= 15, "only {pictures} pictures found in scripts/gallery");
}
