//! Why a member could not start, or stopped on its own.

use std::net::SocketAddr;

use crate::config::ConfigError;
use crate::store::StoreError;

/// Why a member could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The configuration is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The listening address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The HTTP address could not be bound.
    #[error("cannot serve HTTP on {addr}: {source}")]
    Http {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The data directory could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a running member stopped on its own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// A state write failed: going on could break the promise that persisted state is durable before the next
    /// send, so the member stops (fail-stop).
    #[error("stopped: {0}")]
    Store(#[from] StoreError),
    /// The member's task failed.
    #[error("the member's task failed: {0}")]
    Task(String),
}
