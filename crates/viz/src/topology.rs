//! The topology drawing of a run: the nodes where [`Layout`] puts them, their links, their ids, their final
//! state, the leader highlighted, and each node's final parent in its algorithm's tree (flooding and ad hoc
//! algorithms report one) as an arrow towards the parent.

use crate::layout::Layout;
use crate::svg::{LEADER, STATE_COLOURS, Svg};
use crate::trace::{Run, State, state_index};

/// The most nodes drawn.
pub const MAX_DRAWN_NODES: usize = 10_000;

/// Why a topology cannot be drawn.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The layout and the trace disagree.
    #[error("the topology has {layout} nodes but the trace {trace}")]
    Sizes {
        /// Nodes in the layout.
        layout: usize,
        /// Processes in the trace.
        trace: usize,
    },
    /// Too many nodes to draw.
    #[error("{0} nodes are too many to draw (at most {MAX_DRAWN_NODES})")]
    TooLarge(usize),
}

const SIDE: f64 = 640.0;
const MARGIN: f64 = 40.0;
const TOP: f64 = 56.0;
const PARENT: &str = "#1f4e9c";

/// The radius of a node of `layout` drawn `side` wide: small enough that linked nodes do not touch.
pub fn node_radius(layout: &Layout, side: f64) -> f64 {
    let n = layout.xy.len().max(1) as f64;
    let shortest = layout
        .links
        .iter()
        .map(|&[a, b]| {
            let (p, q) = (layout.xy[a as usize], layout.xy[b as usize]);
            ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt()
        })
        .fold(f64::INFINITY, f64::min);
    let by_links = if shortest.is_finite() && shortest > 0.0 { 0.4 * shortest * side } else { f64::INFINITY };
    (side / n.sqrt() / 5.0).min(by_links).clamp(1.5, 18.0)
}

/// The font size that fits `label` in a node of radius `r`.
fn label_size(r: f64, label: &str) -> f64 {
    (r * 0.9).min(2.0 * r / (0.62 * label.len().max(1) as f64)).min(13.0)
}

/// A run's nodes on the page: where each is drawn, how large, and which lead.
struct Placed<'a> {
    run: &'a Run,
    layout: &'a Layout,
    /// A node's radius (a leader's is a quarter larger).
    r: f64,
}

impl Placed<'_> {
    /// The centre of node `i`.
    fn at(&self, i: usize) -> (f64, f64) {
        let (r, xy) = (self.r, self.layout.xy[i]);
        (MARGIN + r + xy[0] * (SIDE - 2.0 * r), TOP + MARGIN + r + xy[1] * (SIDE - 2.0 * r))
    }

    /// Whether node `i` leads: every process that follows itself does (the ad hoc election has one leader per
    /// component).
    fn leads(&self, i: usize) -> bool {
        self.run.last[i].0 != State::Down && self.run.last[i].1 == Some(i as u32)
    }
}

/// The topology drawing of `run` on `layout`, as an SVG document.
pub fn topology_svg(run: &Run, layout: &Layout) -> Result<String, TopologyError> {
    let n = run.len();
    if layout.xy.len() != n {
        return Err(TopologyError::Sizes { layout: layout.xy.len(), trace: n });
    }
    if n > MAX_DRAWN_NODES {
        return Err(TopologyError::TooLarge(n));
    }
    let placed = Placed { run, layout, r: node_radius(layout, SIDE) };
    let height = TOP + SIDE + 2.0 * MARGIN + 30.0;
    let width = SIDE + 2.0 * MARGIN;
    let mut svg = Svg::new(width, height, "");
    svg.raw(&format!(
        "<defs><marker id=\"p\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" \
         orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{PARENT}\"/></marker></defs>"
    ));
    let trees = run.parents.iter().any(Option::is_some);
    heading(&mut svg, &placed, trees);
    links(&mut svg, &placed);
    parent_arrows(&mut svg, &placed);
    nodes(&mut svg, &placed);
    legend(&mut svg, height - 22.0, trees);
    Ok(svg.finish())
}

/// The title (the algorithm, the topology, the leader or leaders) and a note on what the picture shows.
fn heading(svg: &mut Svg, placed: &Placed<'_>, trees: bool) {
    let (run, layout) = (placed.run, placed.layout);
    let n = run.len();
    let leaders: Vec<String> = (0..n).filter(|&i| placed.leads(i)).map(|i| run.ids[i].to_string()).collect();
    let headline = match (run.leader(), leaders.len()) {
        (Some(l), _) => format!("leader {}", run.ids[l as usize]),
        (None, 0) => "no leader".to_owned(),
        (None, k) if k <= 6 => format!("no agreed leader; leaders {}", leaders.join(", ")),
        (None, k) => format!("no agreed leader; {k} leaders"),
    };
    svg.text(
        (MARGIN, 24.0),
        15.0,
        "start",
        "font-weight=\"bold\"",
        &format!("{} on {} of {n}: {headline}", run.algorithm, layout.topology),
    );
    let mut note = String::from("final state of each node");
    if trees {
        note.push_str("; arrows point to each node's parent in its tree");
    }
    if layout.links_omitted {
        note.push_str("; links not drawn (too many)");
    }
    svg.text((MARGIN, 42.0), 11.0, "start", "fill=\"#555\"", &note);
}

fn links(svg: &mut Svg, placed: &Placed<'_>) {
    let link_width = if placed.run.len() > 200 { 0.5 } else { 1.0 };
    svg.raw("<g>");
    for &[a, b] in &placed.layout.links {
        let style = format!("stroke=\"#c8c8c8\" stroke-width=\"{link_width}\"");
        svg.line(placed.at(a as usize), placed.at(b as usize), &style);
    }
    svg.raw("</g>");
}

/// An arrow from each node to its parent, from rim to rim, unless the two touch.
fn parent_arrows(svg: &mut Svg, placed: &Placed<'_>) {
    let r = placed.r;
    for (i, parent) in placed.run.parents.iter().enumerate() {
        let Some(p) = *parent else { continue };
        let ((x1, y1), (x2, y2)) = (placed.at(i), placed.at(p as usize));
        let d = ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt();
        let far = if placed.leads(p as usize) { 1.25 * r } else { r } + 1.0;
        if d <= r + far {
            continue;
        }
        let (ux, uy) = ((x2 - x1) / d, (y2 - y1) / d);
        svg.line(
            (x1 + ux * r, y1 + uy * r),
            (x2 - ux * far, y2 - uy * far),
            &format!("stroke=\"{PARENT}\" stroke-width=\"2\" marker-end=\"url(#p)\""),
        );
    }
}

/// Each node coloured by its final state (a leader larger, in the leader's colour), with its id when it fits.
fn nodes(svg: &mut Svg, placed: &Placed<'_>) {
    let (run, r) = (placed.run, placed.r);
    let label = r >= 6.0;
    for i in 0..run.len() {
        let (state, _) = run.last[i];
        let is_leader = placed.leads(i);
        let fill = if is_leader { LEADER } else { STATE_COLOURS[state_index(state)] };
        let stroke = match state {
            State::Down => "stroke=\"#888\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"",
            _ if is_leader => "stroke=\"#000\" stroke-width=\"3\"",
            _ => "stroke=\"#444\" stroke-width=\"1\"",
        };
        svg.circle(placed.at(i), if is_leader { r * 1.25 } else { r }, &format!("fill=\"{fill}\" {stroke}"));
        if label {
            let id = run.ids[i].to_string();
            let size = label_size(r, &id);
            let colour = if is_leader { "#ffffff" } else { "#111" };
            let (x, y) = placed.at(i);
            svg.text((x, y + size * 0.35), size, "middle", &format!("fill=\"{colour}\""), &id);
        }
    }
}

/// The legend along `ly`: the leader's colour, the states', and the parent arrow if there are trees.
fn legend(svg: &mut Svg, ly: f64, trees: bool) {
    let mut x = MARGIN;
    let item = |svg: &mut Svg, x: &mut f64, fill: &str, label: &str| {
        svg.circle((*x + 6.0, ly), 6.0, &format!("fill=\"{fill}\" stroke=\"#444\" stroke-width=\"1\""));
        svg.text((*x + 16.0, ly + 4.0), 11.0, "start", "", label);
        *x += 16.0 + 6.3 * label.len() as f64 + 16.0;
    };
    item(svg, &mut x, LEADER, "leader");
    for s in [State::Normal, State::Election, State::Down] {
        item(svg, &mut x, STATE_COLOURS[state_index(s)], s.name());
    }
    if trees {
        svg.line((x, ly), (x + 22.0, ly), &format!("stroke=\"{PARENT}\" stroke-width=\"2\" marker-end=\"url(#p)\""));
        svg.text((x + 28.0, ly + 4.0), 11.0, "start", "", "to parent");
    }
}
