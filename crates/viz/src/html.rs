//! The step-through trace viewer: one self-contained HTML file, the topology and the space-time diagram side by
//! side, driven by the run's trace records.
//!
//! The page embeds everything it shows: its style and script (`assets/viewer.css`, `assets/viewer.js`), the
//! space-time diagram as inline SVG, and, in a `<script type="application/json" id="elect-data">` element, the
//! object `{"title", "truncated", "layout": Layout, "colours": {kind: colour}, "labels": Labels, "records": [trace
//! records...]}`, where the records are the
//! JSON-lines trace of `crates/sim/src/trace.rs`, one object per line, in order. Any driver that writes those
//! records and a [`Layout`] can be viewed. A content security policy forbids every fetch, so the page works
//! offline and reveals nothing to the network.
//!
//! In the page: step forward and back (buttons or arrow keys), play and pause (space) at a chosen speed, jump to
//! an event by number, with the slider or by clicking the diagram at its time; `#step=N` in the address opens it
//! at event `N` (and follows the step, so the address is a link to it); save the picture at this step as SVG or
//! PNG (drawn in the page: the policy lets images come only from `data:` addresses); present it on a projector
//! (large type, fullscreen). Inside `elect serve`'s page it reports its step and height to the page and goes to the
//! step the page asks for (`postMessage`). The topology (`assets/canvas.js`, the picture Explore draws too) shows
//! each process as a state card in its algorithm's words (the leader marked, the process that took the step
//! outlined in red), its parent in its algorithm's tree, broken links, Invitation's groups, and the messages in
//! flight as labelled chips moving along their links; when the layout leaves no room for cards (many processes)
//! each is a circle coloured by its state and the messages dots. A table, folded under the picture when cards are
//! shown, lists each node's state, leader, epoch, parent, group and last event.

use crate::layout::Layout;
use crate::spacetime::space_time_svg;
use crate::svg::escape;
use crate::trace::Run;

/// The most processes the viewer is made for (its table has one row per process).
pub const MAX_VIEWER_NODES: usize = 1_000;

/// Why the viewer cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// Too many processes.
    #[error("the HTML viewer shows at most {MAX_VIEWER_NODES} processes; this run has {0}")]
    TooLarge(usize),
    /// The layout and the trace disagree.
    #[error("the topology has {layout} nodes but the trace {trace}")]
    Mismatch {
        /// Nodes in the layout.
        layout: usize,
        /// Processes in the trace.
        trace: usize,
    },
}

const CSS: &str = include_str!("../assets/viewer.css");
/// The picture of a state every view draws (`assets/canvas.js`): state cards, links, groups and message chips,
/// and a path's space-time diagram. The viewer embeds it; `elect serve` serves it to its page.
pub const CANVAS_JS: &str = include_str!("../assets/canvas.js");
const JS: &str = include_str!("../assets/viewer.js");

/// The viewer of `run` on `layout`, as one HTML document.
pub fn html_viewer(run: &Run, layout: &Layout) -> Result<String, HtmlError> {
    if run.len() > MAX_VIEWER_NODES {
        return Err(HtmlError::TooLarge(run.len()));
    }
    if layout.xy.len() != run.len() {
        // Checked here too so that the page never draws a node the layout does not place.
        return Err(HtmlError::Mismatch { layout: layout.xy.len(), trace: run.len() });
    }
    let title = format!("{} on {} of {}, seed {}", run.algorithm, run.topology, run.len(), run.seed);
    let truncated = if run.lines_truncated {
        format!("<span id=\"truncated\">only the first {} trace records are shown</span>", run.lines.len())
    } else {
        String::new()
    };
    let data = data(run, layout, &title);
    let svg = space_time_svg(run);
    Ok(page(&escape(&title), &truncated, svg.trim_end(), &data))
}

/// The page's data element: the title, whether the records are cut short, the layout and the trace records.
fn data(run: &Run, layout: &Layout, title: &str) -> String {
    let colours: serde_json::Map<String, serde_json::Value> =
        run.kinds.iter().map(|k| (k.clone(), crate::kind_colour(k).into())).collect();
    let data = format!(
        "{{\"title\":{},\"truncated\":{},\"layout\":{},\"colours\":{},\"labels\":{},\"records\":[{}]}}",
        serde_json::Value::String(title.to_owned()),
        run.lines_truncated,
        serde_json::to_string(layout).unwrap_or_else(|_| "null".to_owned()),
        serde_json::Value::Object(colours),
        serde_json::to_string(&run.labels).unwrap_or_else(|_| "{}".to_owned()),
        run.lines.join(",\n")
    );
    // `<` only occurs inside JSON strings, where `\u003c` means the same; escaped, no text of the trace can end the
    // script element or open another.
    data.replace('<', "\\u003c")
}

/// The page around its parts: the escaped `title`, the `truncated` note (HTML, or empty), the space-time diagram
/// (`svg`) and the `data` element's contents.
fn page(title: &str, truncated: &str, svg: &str, data: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>elect: {title}</title>
<style>
{CSS}</style>
</head>
<body>
<header>
<h1>{title}</h1>
<div id="controls">
<button id="first" title="first event">|◀</button>
<button id="back" title="step back (←)">◀</button>
<button id="play" title="play or pause (space)">▶ play</button>
<button id="forward" title="step forward (→)">▶</button>
<button id="last" title="last step">▶|</button>
<label>speed <select id="speed">
<option value="1">1 step/s</option>
<option value="2">2 steps/s</option>
<option value="5" selected>5 steps/s</option>
<option value="10">10 steps/s</option>
<option value="25">25 steps/s</option>
<option value="100">100 steps/s</option>
</select></label>
<input id="slider" type="range" min="0" value="0" title="step">
<label>step <input id="jump" type="number" min="0" value="0"></label>
<button id="go">go</button>
<span id="position"></span>
<span id="flight"></span>
<span id="violations"></span>
<span id="typed" title="Live: type a process's id and Enter to crash or restart it, A-B and Enter to cut or heal a link"></span>
<span id="tools"><button id="save-svg" title="save the picture at this step as SVG">SVG</button>
<button id="save-png" title="save the picture at this step as PNG">PNG</button>
<button id="present" title="large type and a large picture, for a projector" aria-pressed="false">present</button></span>
{truncated}
</div>
</header>
<main>
<section class="pane" id="topology-pane"><svg id="topology" xmlns="http://www.w3.org/2000/svg"></svg></section>
<section class="pane" id="event-pane" aria-live="polite"><pre id="event"></pre><details><summary>raw records</summary><pre id="event-raw"></pre></details></section>
<section class="pane" id="spacetime-pane">
{svg}
</section>
</main>
<section id="details">
<div class="pane" id="nodes-pane">
<details id="nodes-details" open><summary>every process in a table: state, leader, epoch, parent, group, last event</summary>
<table id="nodes">
<thead><tr><th>id</th><th>state</th><th>in its algorithm's words</th><th>leader</th><th>epoch</th><th>parent</th><th>group</th><th>last event (rule)</th></tr></thead>
<tbody></tbody>
</table>
</details>
</div>
</section>
<script type="application/json" id="elect-data">{data}</script>
<script>
{CANVAS_JS}</script>
<script>
{JS}</script>
</body>
</html>
"#
    )
}
