//! The lab of elect: real processes on one machine (`elect node` members, and programs that are algorithms), the
//! faults done to them, and the judge of what they said.
//!
//! - **Cluster** ([`cluster`]): `elect cluster`'s harness. N members as child processes of the `elect` executable,
//!   on loopback or each in a network namespace of its own; the leader killed, paused or cut off (the nemesis),
//!   round after round; the time until every survivor reports the same new leader, and what a fencing store
//!   accepted meanwhile. A [`cluster::Request`] in, a [`cluster::Report`] out.
//! - **History** ([`history`]): a cluster's leadership history judged, as a test harness would: never two leaders
//!   under one epoch, no member's epoch going backwards, no stale write accepted by a fencing store; how long a
//!   side of the cluster agreed on a live leader, and how long two members both said they led. Pure functions,
//!   also used by the container tests, which judge the members' own logs.
//!
//! - **Programs** ([`program`]): `--algorithm exec:PROGRAM`, a student's or a teacher's algorithm in any language,
//!   run as a child process that speaks the process protocol over its standard input and output, each answer
//!   bounded in time and size.
//!
//! The command line gives the arguments and prints the report; everything between is here.

pub mod cluster;
pub mod history;
pub mod program;

/// A request that cannot be run as given (a size out of range, a parameter the algorithm refuses, a program the
/// nemesis needs that is missing), named in the words of `elect cluster`'s flags.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);
