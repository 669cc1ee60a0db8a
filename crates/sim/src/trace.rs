#![doc = include_str!("../../../docs/reference/trace.md")]

use std::io::{self, Write};

use elect_core::{Command, NodeId, Notice, Property, Status, View};
use serde::Serialize;

use crate::report::Time;

/// One trace line.
#[derive(Serialize)]
#[serde(tag = "ev", rename_all = "kebab-case")]
pub(crate) enum Record<'a, M, T> {
    Run {
        algorithm: &'static str,
        topology: String,
        nodes: usize,
        seed: u64,
        delay: String,
        ids: &'a [NodeId],
        initiators: Vec<NodeId>,
    },
    Crash {
        t: Time,
        node: NodeId,
    },
    Recover {
        t: Time,
        node: NodeId,
    },
    Link {
        t: Time,
        from: NodeId,
        to: NodeId,
        both_ways: bool,
        up: bool,
    },
    Partition {
        t: Time,
        partition: String,
        healed: bool,
    },
    Note {
        t: Time,
        note: &'static str,
    },
    Start {
        t: Time,
        node: NodeId,
    },
    Command {
        t: Time,
        node: NodeId,
        cmd: Command,
    },
    Send {
        t: Time,
        node: NodeId,
        to: NodeId,
        id: u64,
        at: Time,
        kind: &'static str,
        text: String,
        msg: &'a M,
    },
    Deliver {
        t: Time,
        node: NodeId,
        from: NodeId,
        id: u64,
        kind: &'static str,
        text: String,
        msg: &'a M,
    },
    Drop {
        t: Time,
        node: NodeId,
        from: NodeId,
        id: u64,
        reason: &'static str,
    },
    Timer {
        t: Time,
        node: NodeId,
        text: String,
        timer: &'a T,
    },
    Rule {
        t: Time,
        node: NodeId,
        rule: &'static str,
    },
    View {
        t: Time,
        node: NodeId,
        view: &'a View,
    },
    Status {
        t: Time,
        node: NodeId,
        #[serde(flatten)]
        status: Status,
    },
    Notice {
        t: Time,
        node: NodeId,
        #[serde(flatten)]
        notice: Notice,
    },
    Parent {
        t: Time,
        node: NodeId,
        parent: Option<NodeId>,
    },
    Violation {
        t: Time,
        property: Property,
        node: Option<NodeId>,
        detail: &'a str,
    },
    End {
        t: Time,
        events: u64,
        messages: u64,
        terminated: bool,
    },
}

/// Where trace lines go. The first write error stops tracing and is reported when the run ends.
pub(crate) struct Trace {
    /// Each process's view as last traced, by position, and who is at the far end of each of its ports.
    pub(crate) views: Vec<(View, Vec<elect_core::Neighbor>)>,
    out: Box<dyn Write + Send>,
    error: Option<io::Error>,
}

impl Trace {
    pub(crate) fn new(out: Box<dyn Write + Send>, views: Vec<(View, Vec<elect_core::Neighbor>)>) -> Self {
        Self { out, error: None, views }
    }

    pub(crate) fn record<M: Serialize, T: Serialize>(&mut self, record: &Record<'_, M, T>) {
        if self.error.is_some() {
            return;
        }
        let written = serde_json::to_writer(&mut self.out, record)
            .map_err(io::Error::from)
            .and_then(|()| self.out.write_all(b"\n"));
        if let Err(e) = written {
            self.error = Some(e);
        }
    }

    pub(crate) fn finish(mut self) -> io::Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        }
    }
}
