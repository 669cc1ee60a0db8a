//! Every election algorithm of elect, implemented once as a sans-IO [`elect_core::Process`], and a
//! [`registry`] that hands them to drivers by name.
//!
//! Each module opens with the algorithm's model, messages, guarantees, cost, and the seed it comes from.
//! Nothing here does I/O, reads a clock or holds a random generator.

pub mod bully;
pub mod chang_roberts;
pub mod lelann;
pub mod params;
pub mod registry;
pub mod ring_participant;

pub use params::{ParamError, ParamInfo, Params};
pub use registry::{
    Algorithm, Bound, Driver, Facts, Info, Initiators, Measure, Needs, RegistryError, Showcase, Timing, dispatch,
    lookup,
};

use elect_core::{RingPorts, Setup};

/// The ring orientation of a process of a ring algorithm.
///
/// # Panics
/// If the driver built a ring algorithm on a topology without one; drivers check [`Needs::Ring`] first.
fn ring_ports(setup: &Setup<'_>) -> RingPorts {
    setup.ring.expect("a ring algorithm was built on a topology without ring ports")
}
