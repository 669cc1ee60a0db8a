//! The space-time diagram of a run: one horizontal line per process, time to the right, a message as an arrow
//! from its send to its delivery coloured by kind, the line coloured by the process's state, crashes, recoveries,
//! leader declarations and changes of leader marked, and a legend.
//!
//! Up to [`MAX_LINES`] processes and [`MAX_ARROWS`] messages the picture shows every event; a larger run gets a
//! summary instead: messages sent over time, stacked by kind, and processes by state over time.

use std::collections::BTreeMap;

use crate::colours::kind_colour;
use crate::svg::{LEADER, STATE_COLOURS, Svg, escape, num, ticks};
use crate::trace::{Run, STATES, State, What, state_index};

/// The most processes drawn one line each.
pub const MAX_LINES: usize = 64;
/// The most messages drawn one arrow each.
pub const MAX_ARROWS: u64 = 5_000;

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 56.0;

/// Whether `run` is drawn in full (otherwise as a summary).
pub fn is_detailed(run: &Run) -> bool {
    run.len() <= MAX_LINES && run.messages <= MAX_ARROWS && !run.truncated
}

/// Where the time axis sits, for viewers that move a cursor along it: `x = x0 + (t - t0) * (x1 - x0) / (t1 - t0)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    /// The left end of the axis.
    pub x0: f64,
    /// The right end.
    pub x1: f64,
    /// The time at `x0`.
    pub t0: f64,
    /// The time at `x1`.
    pub t1: f64,
    /// The top of the plotting area.
    pub y0: f64,
    /// Its bottom.
    pub y1: f64,
    /// The height of a process's line, when there is one line per process (the first centred at `y0 + row / 2`).
    pub row: Option<f64>,
}

impl Axis {
    fn x(&self, t: f64) -> f64 {
        self.x0 + (t - self.t0) * (self.x1 - self.x0) / (self.t1 - self.t0)
    }

    fn attributes(&self) -> String {
        let row = self.row.map_or_else(String::new, |r| format!(" data-row=\"{r}\""));
        format!(
            " data-x0=\"{}\" data-x1=\"{}\" data-t0=\"{}\" data-t1=\"{}\" data-y0=\"{}\" data-y1=\"{}\"{row}",
            num(self.x0),
            num(self.x1),
            self.t0,
            self.t1,
            num(self.y0),
            num(self.y1)
        )
    }
}

/// The space-time diagram of `run`, as an SVG document.
pub fn space_time_svg(run: &Run) -> String {
    if is_detailed(run) { detailed(run) } else { summary(run) }
}

/// The picture's title, at the top: the run, its leader and its count of messages.
fn title(svg: &mut Svg, run: &Run) {
    let leader = match run.leader() {
        Some(l) => format!("leader {}", run.ids[l as usize]),
        None => "no agreed leader".to_owned(),
    };
    // A checker's path has no seed: the checker chose each step.
    let text = if run.steps {
        format!("{} on {} of {}, a path the checker found: {leader}", run.algorithm, run.topology, run.len())
    } else {
        format!("{} on {} of {}, seed {}: {leader}", run.algorithm, run.topology, run.len(), run.seed)
    };
    let count = format!(", {} messages", run.messages);
    counted(svg, (LEFT, 24.0), 15.0, "font-weight=\"bold\"", &text, &count, "");
}

/// A line of text with a count in it (`before`, the count, `after`), the count in a `<tspan class="count">`, so
/// that a page that asks for a prediction can hide it (`elect serve`'s exercise mode).
fn counted(svg: &mut Svg, (x, y): (f64, f64), size: f64, style: &str, before: &str, count: &str, after: &str) {
    svg.raw(&format!(
        "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"start\" {style}>{}<tspan class=\"count\">{}</tspan>{}</text>",
        num(x),
        num(y),
        num(size),
        escape(before),
        escape(count),
        escape(after)
    ));
}

/// When each message was delivered or dropped: id → (time, dropped).
fn fates(run: &Run) -> BTreeMap<u64, Vec<(f64, bool)>> {
    let mut fates: BTreeMap<u64, Vec<(f64, bool)>> = BTreeMap::new();
    for e in &run.events {
        match e.what {
            What::Deliver { id, .. } => fates.entry(id).or_default().push((e.t, false)),
            What::Drop { id, .. } => fates.entry(id).or_default().push((e.t, true)),
            _ => {}
        }
    }
    fates
}

fn detailed(run: &Run) -> String {
    let n = run.len();
    let row = (360.0 / n as f64).clamp(14.0, 44.0);
    let plot_h = row * n as f64;
    let legend_rows = run.kinds.len().div_ceil(columns(run)) + 1;
    let height = TOP + plot_h + 40.0 + 20.0 * legend_rows as f64 + 10.0;
    let t1 = if run.end > 0.0 { run.end } else { 1.0 };
    let axis = Axis { x0: LEFT, x1: WIDTH - RIGHT, t0: 0.0, t1, y0: TOP, y1: TOP + plot_h, row: Some(row) };
    let y = |node: u32| TOP + row * (node as f64 + 0.5);
    let mut svg = Svg::new(WIDTH, height, &axis.attributes());
    svg.raw(&markers(&run.kinds));
    title(&mut svg, run);
    svg.text(
        (LEFT, 42.0),
        11.0,
        "start",
        "fill=\"#555\"",
        if run.steps {
            "one line per process (coloured by state); arrows: messages from send to delivery; across: the path's steps"
        } else {
            "one line per process (coloured by state); arrows: messages from send to delivery; time in units"
        },
    );
    time_axis(&mut svg, &axis);
    // Process lines, coloured by state, thick while it leads.
    let label_size = (row * 0.6).clamp(8.0, 12.0);
    let mut current: Vec<(f64, State, bool)> = vec![(0.0, State::Normal, false); n];
    let segment = |svg: &mut Svg, node: u32, from: f64, to: f64, state: State, leads: bool| {
        if to <= from && to < t1 {
            return;
        }
        let colour = if leads { LEADER } else { STATE_COLOURS[state_index(state)] };
        let width = match (state, leads) {
            (_, true) => 3.0,
            (State::Election | State::Reorganization, _) => 3.0,
            _ => 1.5,
        };
        let dash = if state == State::Down { " stroke-dasharray=\"4 3\"" } else { "" };
        svg.line(
            (axis.x(from), y(node)),
            (axis.x(to), y(node)),
            &format!("stroke=\"{colour}\" stroke-width=\"{width}\"{dash}"),
        );
    };
    for e in &run.events {
        let (state, leads) = match e.what {
            What::Status { state, leader, .. } => (state, leader == Some(e.node)),
            What::Crash => (State::Down, false),
            What::Recover => (State::Normal, false),
            _ => continue,
        };
        let (from, old, old_leads) = current[e.node as usize];
        if (old, old_leads) != (state, leads) {
            segment(&mut svg, e.node, from, e.t, old, old_leads);
            current[e.node as usize] = (e.t, state, leads);
        }
    }
    for (node, &(from, state, leads)) in current.iter().enumerate() {
        segment(&mut svg, node as u32, from, t1, state, leads);
    }
    for (node, id) in run.ids.iter().enumerate() {
        svg.text((LEFT - 8.0, y(node as u32) + label_size * 0.35), label_size, "end", "", &id.to_string());
    }
    arrows(&mut svg, run, &axis, &y);
    marks(&mut svg, run, &axis, &y, row);
    legend(&mut svg, run, TOP + plot_h + 40.0);
    svg.finish()
}

/// Legend columns: as many as the longest entry ("kind (count)") leaves room for, at most five.
fn columns(run: &Run) -> usize {
    let longest = run.kinds.iter().map(|k| run.labels.message(k).chars().count() + 9).max().unwrap_or(0) as f64;
    (((WIDTH - LEFT - RIGHT) / (36.0 + 6.3 * longest)) as usize).clamp(1, 5)
}

/// One arrowhead per message kind, plus a grey one.
fn markers(kinds: &[String]) -> String {
    let mut defs = String::from("<defs>\n");
    for (k, name) in kinds.iter().enumerate() {
        defs.push_str(&format!(
            "<marker id=\"a{k}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" \
             orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{}\"/></marker>\n",
            kind_colour(name)
        ));
    }
    defs.push_str("</defs>");
    defs
}

fn time_axis(svg: &mut Svg, axis: &Axis) {
    svg.line((axis.x0, axis.y1 + 4.0), (axis.x1, axis.y1 + 4.0), "stroke=\"#333\" stroke-width=\"1\"");
    for t in ticks(axis.t1, 10) {
        let x = axis.x(t);
        svg.line((x, axis.y0), (x, axis.y1 + 4.0), "stroke=\"#eee\" stroke-width=\"1\"");
        svg.line((x, axis.y1 + 4.0), (x, axis.y1 + 8.0), "stroke=\"#333\" stroke-width=\"1\"");
        svg.text((x, axis.y1 + 20.0), 10.0, "middle", "fill=\"#333\"", &tick_label(t));
    }
}

/// A tick's label: ticks are round numbers, so a few significant digits say them exactly.
fn tick_label(t: f64) -> String {
    let s = format!("{t:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn arrows(svg: &mut Svg, run: &Run, axis: &Axis, y: &impl Fn(u32) -> f64) {
    let fates = fates(run);
    svg.raw("<g fill=\"none\">");
    for e in &run.events {
        let What::Send { to, id, at, kind } = e.what else { continue };
        let colour = kind_colour(&run.kinds[kind as usize]);
        let start = (axis.x(e.t), y(e.node));
        let ends = fates.get(&id).map_or(&[][..], Vec::as_slice);
        if ends.is_empty() {
            // Still in flight when the run ended.
            let end = (axis.x(at.min(axis.t1)), y(to));
            svg.line(start, end, &format!("stroke=\"{colour}\" stroke-width=\"1.2\" stroke-dasharray=\"2 3\""));
        }
        for &(t, dropped) in ends {
            let t = if dropped { t.max(at).min(axis.t1) } else { t };
            let end = (axis.x(t), y(to));
            if dropped {
                svg.line(start, end, &format!("stroke=\"{colour}\" stroke-width=\"1.2\" stroke-dasharray=\"5 3\""));
                svg.cross(end, 3.5, "stroke=\"#c62828\" stroke-width=\"1.5\"");
            } else {
                svg.line(start, end, &format!("stroke=\"{colour}\" stroke-width=\"1.2\" marker-end=\"url(#a{kind})\""));
            }
        }
    }
    svg.raw("</g>");
}

fn marks(svg: &mut Svg, run: &Run, axis: &Axis, y: &impl Fn(u32) -> f64, row: f64) {
    let mut leader: Vec<Option<u32>> = vec![None; run.len()];
    let small = (row * 0.55).clamp(7.0, 10.0);
    for e in &run.events {
        let at = (axis.x(e.t), y(e.node));
        match e.what {
            What::Crash => svg.cross(at, 5.0, "stroke=\"#c62828\" stroke-width=\"2.5\""),
            What::Recover => svg.circle(at, 4.0, "fill=\"#ffffff\" stroke=\"#2e7d32\" stroke-width=\"2\""),
            What::Elected => svg.diamond(at, 6.0, "fill=\"#ffd600\" stroke=\"#333\" stroke-width=\"1\""),
            What::Status { leader: new, .. } if new != leader[e.node as usize] => {
                leader[e.node as usize] = new;
                if let Some(l) = new {
                    svg.circle(at, 2.5, &format!("fill=\"{LEADER}\""));
                    if run.len() <= 32 {
                        let label = format!("→{}", run.ids[l as usize]);
                        svg.text((at.0 + 3.0, at.1 - 3.0), small, "start", &format!("fill=\"{LEADER}\""), &label);
                    }
                }
            }
            What::Violation(_) => {
                let x = at.0;
                svg.line((x, axis.y0), (x, axis.y1), "stroke=\"#c62828\" stroke-width=\"1\" stroke-dasharray=\"1 2\"");
            }
            _ => {}
        }
    }
}

fn legend(svg: &mut Svg, run: &Run, top: f64) {
    let mut counts = vec![0u64; run.kinds.len()];
    for e in &run.events {
        if let What::Send { kind, .. } = e.what {
            counts[kind as usize] += 1;
        }
    }
    let columns = columns(run);
    let column = (WIDTH - LEFT - RIGHT) / columns as f64;
    for (k, name) in run.kinds.iter().enumerate() {
        let (x, y) = (LEFT + column * (k % columns) as f64, top + 20.0 * (k / columns) as f64);
        svg.line((x, y), (x + 24.0, y), &format!("stroke=\"{}\" stroke-width=\"2.5\"", kind_colour(name)));
        let count = format!("({})", counts[k]);
        counted(svg, (x + 30.0, y + 4.0), 11.0, "", &format!("{} ", run.labels.message(name)), &count, "");
    }
    let y = top + 20.0 * run.kinds.len().div_ceil(columns) as f64;
    let mut x = LEFT;
    let item = |svg: &mut Svg, x: &mut f64, label: &str| {
        svg.text((*x + 12.0, y + 4.0), 11.0, "start", "", label);
        *x += 12.0 + 6.3 * label.len() as f64 + 18.0;
    };
    for (state, label) in [(State::Election, "election"), (State::Down, "down")] {
        let colour = STATE_COLOURS[state_index(state)];
        svg.line((x - 4.0, y), (x + 8.0, y), &format!("stroke=\"{colour}\" stroke-width=\"3\""));
        item(svg, &mut x, label);
    }
    svg.line((x - 4.0, y), (x + 8.0, y), &format!("stroke=\"{LEADER}\" stroke-width=\"3\""));
    item(svg, &mut x, "leading");
    svg.diamond((x + 2.0, y), 5.0, "fill=\"#ffd600\" stroke=\"#333\" stroke-width=\"1\"");
    item(svg, &mut x, "declares itself leader");
    svg.circle((x + 2.0, y), 2.5, &format!("fill=\"{LEADER}\""));
    item(svg, &mut x, "learns the leader");
    svg.cross((x + 2.0, y), 4.0, "stroke=\"#c62828\" stroke-width=\"2\"");
    item(svg, &mut x, "crash / lost message");
    svg.circle((x + 2.0, y), 4.0, "fill=\"#ffffff\" stroke=\"#2e7d32\" stroke-width=\"2\"");
    item(svg, &mut x, "recovery");
}

/// Buckets of `[0, end]`: at most 100, at least one time unit wide.
fn buckets(end: f64) -> (usize, f64) {
    let units = end.ceil().max(1.0);
    let count = (units as usize).clamp(1, 100);
    (count, units / count as f64)
}

/// Where the summary's two panels sit, and the time buckets they share.
struct Panels {
    /// How many buckets.
    count: usize,
    /// A bucket's width, in time units.
    width: f64,
    /// Each panel's height.
    height: f64,
    /// The top of the lower panel (processes by state); the upper one (messages sent) starts at `TOP`.
    top2: f64,
    /// A bucket's width on the page.
    bar: f64,
}

fn summary(run: &Run) -> String {
    let (count, width) = buckets(run.end);
    let t1 = run.end.ceil().max(1.0);
    let panel = 220.0;
    let gap = 60.0;
    let top2 = TOP + panel + gap;
    let legend_y = top2 + panel + 40.0;
    let height = legend_y + 20.0 * (run.kinds.len().div_ceil(columns(run)) + 1) as f64 + 10.0;
    let axis = Axis { x0: LEFT, x1: WIDTH - RIGHT, t0: 0.0, t1, y0: TOP, y1: top2 + panel, row: None };
    let mut svg = Svg::new(WIDTH, height, &axis.attributes());
    title(&mut svg, run);
    let rest = "; messages sent and processes by state over time";
    if run.len() > MAX_LINES {
        let why = format!("{} processes: too many for one line each{rest}", run.len());
        svg.text((LEFT, 42.0), 11.0, "start", "fill=\"#555\"", &why);
    } else {
        let (count, why) = (format!("{} messages", run.messages), format!(": too many for one arrow each{rest}"));
        counted(&mut svg, (LEFT, 42.0), 11.0, "fill=\"#555\"", "", &count, &why);
    }
    let panels = Panels { count, width, height: panel, top2, bar: (axis.x1 - axis.x0) / count as f64 };
    sent_panel(&mut svg, run, &axis, &panels);
    state_panel(&mut svg, run, &axis, &panels);
    summary_legend(&mut svg, run, legend_y);
    svg.finish()
}

/// Messages sent in each bucket, by kind.
fn sent_per_bucket(run: &Run, count: usize, width: f64) -> Vec<Vec<u64>> {
    let mut sent = vec![vec![0u64; run.kinds.len()]; count];
    for (&unit, counts) in &run.sent_per_unit {
        let b = ((unit as f64 / width) as usize).min(count - 1);
        for (k, c) in counts.iter().enumerate() {
            sent[b][k] += c;
        }
    }
    sent
}

/// The upper panel: messages sent per bucket, stacked by kind.
fn sent_panel(svg: &mut Svg, run: &Run, axis: &Axis, p: &Panels) {
    let panel = p.height;
    let sent = sent_per_bucket(run, p.count, p.width);
    let most = sent.iter().map(|c| c.iter().sum::<u64>()).max().unwrap_or(0).max(1);
    for (b, counts) in sent.iter().enumerate() {
        let mut base = TOP + panel;
        for (k, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let h = panel * c as f64 / most as f64;
            base -= h;
            svg.rect(
                (axis.x0 + p.bar * b as f64, base),
                (p.bar * 0.9, h),
                &format!("fill=\"{}\"", kind_colour(&run.kinds[k])),
            );
        }
    }
    svg.line((axis.x0, TOP + panel), (axis.x1, TOP + panel), "stroke=\"#333\" stroke-width=\"1\"");
    svg.text((axis.x0 - 6.0, TOP + 8.0), 10.0, "end", "", &most.to_string());
    svg.text((axis.x0 - 6.0, TOP + panel), 10.0, "end", "", "0");
    let per = if p.width == 1.0 { "per time unit".to_owned() } else { format!("per {} time units", num(p.width)) };
    svg.text((axis.x0, TOP + panel + 16.0), 11.0, "start", "fill=\"#555\"", &format!("messages sent {per}"));
}

/// The lower panel: processes by state at the end of each bucket, leader declarations ticked above it, and the
/// time axis.
fn state_panel(svg: &mut Svg, run: &Run, axis: &Axis, p: &Panels) {
    let (panel, top2) = (p.height, p.top2);
    let n = run.len().max(1) as f64;
    let mut state = [run.len() as u32, 0, 0, 0];
    let mut changes = run.states_per_unit.iter().peekable();
    for b in 0..p.count {
        let end = p.width * (b + 1) as f64;
        while let Some((_, &s)) = changes.next_if(|(unit, _)| (**unit as f64) < end) {
            state = s;
        }
        let mut base = top2 + panel;
        for s in STATES {
            let c = state[state_index(s)];
            if c == 0 {
                continue;
            }
            let h = panel * f64::from(c) / n;
            base -= h;
            svg.rect(
                (axis.x0 + p.bar * b as f64, base),
                (p.bar, h),
                &format!("fill=\"{}\"", STATE_COLOURS[state_index(s)]),
            );
        }
    }
    svg.text((axis.x0 - 6.0, top2 + 8.0), 10.0, "end", "", &run.len().to_string());
    svg.text((axis.x0 - 6.0, top2 + panel), 10.0, "end", "", "0");
    let x = |t: f64| axis.x0 + t * (axis.x1 - axis.x0) / axis.t1;
    for &(t, _) in &run.elections {
        let x = x(t);
        svg.line((x, top2 - 6.0), (x, top2), &format!("stroke=\"{LEADER}\" stroke-width=\"1.5\""));
    }
    time_axis(svg, &Axis { y0: top2, ..*axis });
    svg.text(
        (axis.x0, top2 - 10.0),
        11.0,
        "start",
        "fill=\"#555\"",
        &match run.elections.len() {
            1 => "processes by state (1 leader declaration, the tick above)".to_owned(),
            k => format!("processes by state ({k} leader declarations, ticks above)"),
        },
    );
}

/// The summary's legend at `top`: each message kind with its total, then the states.
fn summary_legend(svg: &mut Svg, run: &Run, top: f64) {
    let columns = columns(run);
    let column = (WIDTH - LEFT - RIGHT) / columns as f64;
    for (k, name) in run.kinds.iter().enumerate() {
        let (lx, ly) = (LEFT + column * (k % columns) as f64, top + 20.0 * (k / columns) as f64);
        let total: u64 = run.sent_per_unit.values().map(|c| c[k]).sum();
        svg.rect((lx, ly - 6.0), (20.0, 10.0), &format!("fill=\"{}\"", kind_colour(name)));
        counted(
            svg,
            (lx + 26.0, ly + 3.0),
            11.0,
            "",
            &format!("{} ", run.labels.message(name)),
            &format!("({total})"),
            "",
        );
    }
    let ly = top + 20.0 * run.kinds.len().div_ceil(columns) as f64;
    for (i, s) in STATES.into_iter().enumerate() {
        let lx = LEFT + 172.0 * i as f64;
        svg.rect((lx, ly - 6.0), (20.0, 10.0), &format!("fill=\"{}\"", STATE_COLOURS[state_index(s)]));
        svg.text((lx + 26.0, ly + 3.0), 11.0, "start", "", s.name());
    }
}
