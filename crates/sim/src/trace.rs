//! The JSON-lines trace of a run: one [`Record`](elect_scenario::Record) a line (the schema, and its legend, is
//! `elect_scenario::Record`'s).

use std::io::{self, Write};

use elect_core::View;
use serde::Serialize;

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

    /// Writes one record as a line.
    pub(crate) fn record(&mut self, record: &impl Serialize) {
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
