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

use elect_core::{Check, Property, RingPorts, Setup, When};

/// The ring orientation of a process of a ring algorithm.
///
/// # Panics
/// If the driver built a ring algorithm on a topology without one; drivers check [`Needs::Ring`] first.
fn ring_ports(setup: &Setup<'_>) -> RingPorts {
    setup.ring.expect("a ring algorithm was built on a topology without ring ports")
}

/// The properties every election here promises: S001 safety (after every event or at the end), P-Unique when
/// the algorithm has an "I am leader" action, and, once quiescent, S001 liveness and S003's `L(i)` conditions.
fn election_checks(safety: When, unique: bool) -> Vec<Check> {
    let mut checks = vec![Check { property: Property::Safety, when: safety }];
    if unique {
        checks.push(Check::always(Property::Uniqueness));
    }
    checks
        .extend([Property::Liveness, Property::Validity, Property::Agreement, Property::LiveLeader].map(Check::at_end));
    checks
}
