//! The HTML viewer is one self-contained file: it embeds its trace, style and script, and fetches nothing.

use elect_scenario::{Scenario, SimConfig};
use elect_viz::{Layout, Limits, Run, SharedCollector, html_viewer};

fn viewer(cfg: &SimConfig) -> (String, Run) {
    let collector = SharedCollector::new(Limits::default());
    elect_sim::simulate(cfg, Some(Box::new(collector.clone()))).unwrap();
    let run = collector.finish().unwrap();
    let layout = Layout::of(&Scenario::build(cfg).unwrap().graph);
    (html_viewer(&run, &layout).unwrap(), run)
}

/// The JSON object embedded in the page.
fn data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"elect-data\">";
    let start = html.find(open).expect("the data element") + open.len();
    let end = start + html[start..].find("</script>").expect("its end");
    serde_json::from_str(&html[start..end]).expect("the data is JSON")
}

#[test]
fn the_page_fetches_nothing() {
    let mut cfg = SimConfig::new("bully", 6);
    cfg.crashes = vec!["6@0".parse().unwrap()];
    let (html, _) = viewer(&cfg);
    assert!(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"));
    // The only URL is the SVG namespace, which names and never loads.
    let namespace = "http://www.w3.org/2000/svg";
    assert_eq!(html.matches("http://").count(), html.matches(namespace).count());
    assert!(!html.contains("https://"));
    for forbidden in [
        " src=",
        "href=",
        "<link",
        "<img",
        "<iframe",
        "@import",
        "fetch(",
        "XMLHttpRequest",
        "import(",
        "WebSocket",
        "EventSource",
        "sendBeacon",
        "\"//",
        "'//",
        "=//",
    ] {
        assert!(!html.contains(forbidden), "the page contains {forbidden}");
    }
    for (i, _) in html.match_indices("url(") {
        assert!(html[i + 4..].starts_with('#'), "only references inside the page: {}", &html[i..i + 20]);
    }
}

#[test]
fn the_page_embeds_the_whole_trace() {
    let mut cfg = SimConfig::new("timestamp-flooding", 9);
    cfg.topology = Some("grid:3x3".parse().unwrap());
    cfg.crashes = vec!["9@0".parse().unwrap()];
    cfg.initiators = "neighbors:9".parse().unwrap();
    let (html, run) = viewer(&cfg);
    let data = data(&html);
    let records = data["records"].as_array().unwrap();
    assert_eq!(records.len(), run.lines.len());
    assert_eq!(records[0]["ev"], "run");
    assert!(records.iter().any(|r| r["ev"] == "parent"), "the tree is in the trace");
    assert_eq!(data["layout"]["xy"].as_array().unwrap().len(), 9);
    assert_eq!(data["truncated"], false);
}

#[test]
fn trace_text_cannot_end_the_script_early() {
    let trace = concat!(
        "{\"ev\":\"run\",\"algorithm\":\"x</script><script>alert(1)</script>\",\"topology\":\"ring\",\"ids\":[1]}\n",
        "{\"ev\":\"note\",\"t\":0,\"note\":\"</SCRIPT></script>\"}\n"
    );
    let run = Run::parse(trace, Limits::default()).unwrap();
    let layout = Layout { topology: "ring".into(), xy: vec![[0.5, 0.5]], links: vec![], links_omitted: false };
    let html = html_viewer(&run, &layout).unwrap();
    assert!(!html.contains("<script>alert"));
    assert_eq!(html.matches("</script>").count(), 3, "the data element's, the picture's code and the viewer's");
    assert_eq!(data(&html)["records"][1]["note"], "</SCRIPT></script>");
}
