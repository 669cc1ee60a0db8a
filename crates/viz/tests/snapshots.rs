//! Snapshot tests: pictures of fixed runs are compared byte for byte with the files in `tests/snapshots/`.
//!
//! After a deliberate change to a picture, regenerate them with
//! `UPDATE_SNAPSHOTS=1 cargo test -p elect-viz --test snapshots`, look at the new files, and commit them.

use std::path::PathBuf;

use elect_scenario::{Scenario, SimConfig};
use elect_viz::{Layout, Limits, Run, SharedCollector, shiviz_log, space_time_svg, topology_svg};

/// A run of `algorithm` on `n` nodes, changed by `setup`, with its layout.
fn run(algorithm: &str, n: usize, setup: impl FnOnce(&mut SimConfig)) -> (Run, Layout) {
    let mut cfg = SimConfig::new(algorithm, n);
    setup(&mut cfg);
    let collector = SharedCollector::new(Limits::default());
    elect_sim::simulate(&cfg, Some(Box::new(collector.clone()))).expect("the run is valid");
    let layout = Layout::of(&Scenario::build(&cfg).expect("the scenario is valid").graph);
    (collector.finish().expect("the trace reads back"), layout)
}

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; run with UPDATE_SNAPSHOTS=1 to create it", path.display()));
    assert!(
        expected == actual,
        "{name} differs from {}; if the change is meant, run UPDATE_SNAPSHOTS=1 cargo test -p elect-viz --test \
         snapshots and review the new file",
        path.display()
    );
}

#[test]
fn chang_roberts_worst_case_space_time() {
    let (run, _) = run("chang-roberts", 8, |c| c.ids = "descending".parse().unwrap());
    check("chang-roberts-8.svg", &space_time_svg(&run));
}

#[test]
fn bully_with_a_crash_space_time() {
    let (run, _) = run("bully", 6, |c| {
        c.crashes = vec!["6@0".parse().unwrap(), "5@3".parse().unwrap()];
        c.initiators = "1".parse().unwrap();
    });
    check("bully-6-crashes.svg", &space_time_svg(&run));
}

#[test]
fn timestamp_flooding_tree_on_a_grid() {
    let (run, layout) = run("timestamp-flooding", 16, |c| {
        c.topology = Some("grid:4x4".parse().unwrap());
        c.crashes = vec!["16@0".parse().unwrap()];
        c.initiators = "neighbors:16".parse().unwrap();
    });
    assert!(run.parents.iter().filter(|p| p.is_some()).count() >= 13, "a spanning tree of the live nodes");
    check("timestamp-flooding-grid.svg", &space_time_svg(&run));
    check("timestamp-flooding-grid-topology.svg", &topology_svg(&run, &layout).unwrap());
}

#[test]
fn ad_hoc_on_a_geometric_graph() {
    let (run, layout) = run("ad-hoc", 30, |c| {
        c.topology = Some("geometric:0.35".parse().unwrap());
        c.ids = "random".parse().unwrap();
        c.initiators = "random:1".parse().unwrap();
        c.seed = 3;
    });
    check("ad-hoc-geometric-topology.svg", &topology_svg(&run, &layout).unwrap());
}

#[test]
fn large_runs_get_a_summary() {
    let (run, layout) = run("hirschberg-sinclair", 128, |c| c.ids = "random".parse().unwrap());
    let svg = space_time_svg(&run);
    assert!(svg.contains("128 processes: too many for one line each"));
    check("hirschberg-sinclair-128-summary.svg", &svg);
    check("hirschberg-sinclair-128-topology.svg", &topology_svg(&run, &layout).unwrap());
}

#[test]
fn shiviz_log_of_a_small_ring() {
    let (run, _) = run("chang-roberts", 4, |c| c.ids = "descending".parse().unwrap());
    check("chang-roberts-4.shiviz", &shiviz_log(&run).unwrap());
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let picture = || {
        let (run, layout) = run("franklin", 12, |c| {
            c.ids = "random".parse().unwrap();
            c.delay = "uniform:1..3".parse().unwrap();
            c.seed = 9;
        });
        (space_time_svg(&run), topology_svg(&run, &layout).unwrap(), elect_viz::html_viewer(&run, &layout).unwrap())
    };
    assert!(picture() == picture());
}
