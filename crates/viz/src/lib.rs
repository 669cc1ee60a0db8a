//! Pictures of elect's runs: the message-complexity plot of a sweep (`elect sweep --plot`, `elect plot`), and,
//! from a run's JSON-lines trace, its space-time diagram, its topology drawing, a step-through HTML viewer and an
//! export to ShiViz's log format.
//!
//! Every picture of a run is drawn from the trace records alone (read by [`Collector`] into a [`Run`]) and a
//! [`Layout`] of the topology, so the same output comes from the same trace, byte for byte.
//!
//! ```
//! use elect_viz::{Limits, SharedCollector, space_time_svg};
//!
//! let cfg = elect_scenario::SimConfig::new("chang-roberts", 4);
//! let collector = SharedCollector::new(Limits::default());
//! elect_sim::simulate(&cfg, Some(Box::new(collector.clone()))).unwrap();
//! let run = collector.finish().unwrap();
//! assert_eq!(run.leader().map(|p| run.ids[p as usize]), Some(4));
//! assert!(space_time_svg(&run).starts_with("<svg"));
//! ```

pub mod colours;
pub mod html;
pub mod labels;
pub mod layout;
pub mod plot;
pub mod shiviz;
pub mod spacetime;
mod svg;
pub mod topology;
pub mod trace;

pub use colours::kind_colour;
pub use html::{CANVAS_JS, HtmlError, html_viewer};
pub use labels::{Labels, LabelsError};
pub use layout::Layout;
pub use plot::{Metric, PlotError, Point, complexity_plot, read_csv};
pub use shiviz::{SHIVIZ_REGEX, Truncated, shiviz_log};
pub use spacetime::{MAX_ARROWS, MAX_LINES, space_time_svg};
pub use svg::escape;
pub use topology::{TopologyError, topology_svg};
pub use trace::{Collector, Event, Limits, Run, STATES, SharedCollector, State, TraceError, What, state_index};
