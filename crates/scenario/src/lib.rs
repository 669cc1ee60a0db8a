//! The scenario language of elect: what a run is made of, as users write it and as every driver takes it.
//!
//! A [`SimConfig`] is a run as the user describes it (flags or a TOML [`ScenarioFile`]): the algorithm and its
//! parameters, the topology ([`TopologyKind`]), the id arrangement ([`Ids`]), the initiators, the message delays,
//! the faults and their times, mobility. [`Scenario::build`] validates it ([`ConfigError`] says what is wrong) and
//! resolves it into ids, ranks, initiators, a [`Graph`] and faults by position, drawing whatever is random from
//! separate streams of the root seed ([`rng`]). The simulator runs a scenario, the model checker explores it, and
//! both build its processes with [`build_process`]. Time is written in units of the default message delay
//! ([`parse_time`], [`format_time`], [`Time`]). A traced run is a list of [`Record`]s, one JSON line each.
//!
//! ```
//! use elect_scenario::{Ids, Scenario, SimConfig};
//!
//! let mut cfg = SimConfig::new("chang-roberts", 8);
//! cfg.ids = Ids::Descending;
//! let scenario = Scenario::build(&cfg).unwrap();
//! assert_eq!(scenario.ids[0].0, 8);
//! assert_eq!(scenario.graph.edges(), 8);
//! ```

mod config;
mod draw;
mod error;
mod faults;
mod graph;
mod mobility;
pub mod rng;
mod scenario;
mod scenario_file;
mod spec;
mod time;
mod topology;
mod trace;

pub use config::{Attrs, DEFAULT_MAX_EVENTS, Delay, Ids, InitiatorSpec, Monitor, SimConfig};
pub use elect_algos::params::{shorten, shorten_to};
pub use error::ConfigError;
pub use faults::{
    Link, LinkDown, LinkFault, Loss, Losses, NodeAt, Partition, PartitionFault, Probability, Transfer, Window,
};
pub use graph::{End, Graph};
pub use mobility::MobilitySpec;
pub use scenario::{Scenario, Scheduled, build_process, neighbors};
pub use scenario_file::{Expect, FileError, ScenarioFile};
pub use spec::SpecError;
pub use time::{TICKS_PER_UNIT, Time, TimeError, format_time, parse_time};
pub use topology::{
    EdgeFile, LineProblem, MAX_COMPLETE_NODES, MAX_GEOMETRIC_LINKS, MAX_NODES, Radius, TopologyError, TopologyKind,
};
pub use trace::Record;
