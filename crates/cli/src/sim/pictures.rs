//! `elect sim --svg/--topology-svg/--html/--shiviz`: pictures of the run, drawn from its trace.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use elect_scenario::{Scenario, SimConfig};
use elect_viz::{Labels, Layout, Limits, SharedCollector};

use crate::outcome::BadInput;

/// The picture files asked for.
pub(crate) struct Pictures {
    svg: Option<PathBuf>,
    topology: Option<PathBuf>,
    html: Option<PathBuf>,
    shiviz: Option<PathBuf>,
    labels: Labels,
    collector: Option<SharedCollector>,
}

impl Pictures {
    pub(crate) fn new(
        svg: Option<&Path>,
        topology: Option<&Path>,
        html: Option<&Path>,
        shiviz: Option<&Path>,
        labels: Labels,
    ) -> Self {
        let any = svg.is_some() || topology.is_some() || html.is_some() || shiviz.is_some();
        Self {
            svg: svg.map(Path::to_path_buf),
            topology: topology.map(Path::to_path_buf),
            html: html.map(Path::to_path_buf),
            shiviz: shiviz.map(Path::to_path_buf),
            labels,
            collector: any.then(|| SharedCollector::new(Limits::default())),
        }
    }

    /// Refuses, before the run, a picture that could not be drawn of a run of `nodes` processes: the HTML viewer
    /// shows at most `elect_viz::html::MAX_VIEWER_NODES`, the topology at most
    /// `elect_viz::topology::MAX_DRAWN_NODES` (the run would otherwise be traced, at length, for nothing).
    pub(crate) fn check(&self, nodes: usize) -> Result<(), BadInput> {
        let limits = [
            (self.html.is_some(), "--html", "the HTML viewer", elect_viz::html::MAX_VIEWER_NODES),
            (self.topology.is_some(), "--topology-svg", "the topology picture", elect_viz::topology::MAX_DRAWN_NODES),
        ];
        for (asked, flag, what, most) in limits {
            if asked && nodes > most {
                return Err(BadInput(format!(
                    "{flag}: {what} shows at most {most} processes, and this run has {nodes}; leave out {flag}"
                )));
            }
        }
        Ok(())
    }

    /// The trace sink to give the simulator: `trace`, and the pictures' collector if any picture is asked for.
    pub(crate) fn tee(&self, trace: Option<Box<dyn Write + Send>>) -> Option<Box<dyn Write + Send>> {
        match (&self.collector, trace) {
            (None, trace) => trace,
            (Some(c), None) => Some(Box::new(c.clone())),
            (Some(c), Some(trace)) => Some(Box::new(Tee(trace, c.clone()))),
        }
    }

    /// Draws the pictures of the run just simulated from `cfg`.
    pub(crate) fn write(&self, cfg: &SimConfig) -> anyhow::Result<()> {
        let Some(collector) = &self.collector else { return Ok(()) };
        let mut run = collector.finish().context("cannot read the run's trace")?;
        run.labels = self.labels.clone();
        if let Some(path) = &self.svg {
            save(path, &elect_viz::space_time_svg(&run))?;
        }
        if let Some(path) = &self.shiviz {
            save(path, &elect_viz::shiviz_log(&run).map_err(|e| BadInput(format!("--shiviz: {e}")))?)?;
        }
        if self.topology.is_none() && self.html.is_none() {
            return Ok(());
        }
        let scenario = Scenario::build(cfg).map_err(|e| BadInput(e.to_string()))?;
        let layout = Layout::of(&scenario.graph);
        if let Some(path) = &self.topology {
            save(path, &elect_viz::topology_svg(&run, &layout)?)?;
        }
        if let Some(path) = &self.html {
            save(path, &elect_viz::html_viewer(&run, &layout).map_err(|e| BadInput(format!("--html: {e}")))?)?;
        }
        Ok(())
    }
}

fn save(path: &Path, text: &str) -> anyhow::Result<()> {
    Ok(crate::limits::write_file(path, "picture", text.as_bytes())?)
}

/// Writes to both: the trace file (whose errors count) and the collector.
pub(crate) struct Tee<W>(pub(crate) Box<dyn Write + Send>, pub(crate) W);

impl<W: Write> Write for Tee<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(buf)?;
        self.1.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}
