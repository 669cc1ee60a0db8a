//! The steps the system may take, as the search names them and counterexample files keep them.

use serde::{Deserialize, Serialize};

/// One step the system may take. Saved in counterexample files, which `elect sim --replay` takes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "do")]
pub enum Action {
    /// The message at `index` of directed link slot `link` arrives.
    Deliver {
        /// The link slot.
        link: u32,
        /// The message's place on the link.
        index: u32,
    },
    /// As `Deliver`, but a copy stays in flight (duplicating networks).
    DeliverCopy {
        /// The link slot.
        link: u32,
        /// The message's place on the link.
        index: u32,
    },
    /// The message is lost (lossy networks), or reaches a process that is down.
    Lose {
        /// The link slot.
        link: u32,
        /// The message's place on the link.
        index: u32,
    },
    /// The `timer`-th armed timer of `node` (a position) fires.
    Fire {
        /// The position.
        node: u32,
        /// The timer's place among the node's armed timers.
        timer: u32,
    },
    /// The process at a position crashes.
    Crash {
        /// The position.
        node: u32,
    },
    /// The crashed process at a position restarts from what it made durable.
    Recover {
        /// The position.
        node: u32,
    },
    /// Time passes to the next instant something may happen (timed runs).
    Wait,
}
