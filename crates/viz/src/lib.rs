//! Pictures of elect's runs. Today: the message-complexity plot of a sweep (`elect sweep --plot`,
//! `elect plot`), as SVG or PNG.

pub mod plot;

pub use plot::{Metric, PlotError, Point, complexity_plot, read_csv};
