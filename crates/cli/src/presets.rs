//! The scenarios that ship with elect: every file of `scenarios/`, compiled in, so that `elect sim --scenario
//! stoller` and `elect serve`'s page (without `--allow-files`) run them by name; and the page's presets, those
//! scenarios and the tour's showcase runs.

use std::borrow::Cow;
use std::path::Path;

use elect_algos::registry;
use elect_scenario::SimConfig;

use crate::limits::Limits;
use crate::outcome::BadInput;

/// Every scenario of `scenarios/`, by name (the file name without `.toml`), in name order.
pub(crate) const SCENARIOS: &[(&str, &str)] = &[
    ("bully-candidate-crash", include_str!("../../../scenarios/bully-candidate-crash.toml")),
    ("bully-figure", include_str!("../../../scenarios/bully-figure.toml")),
    ("bully-inaccurate-detector", include_str!("../../../scenarios/bully-inaccurate-detector.toml")),
    ("floodmax-alpha", include_str!("../../../scenarios/floodmax-alpha.toml")),
    ("garcia-molina-typical", include_str!("../../../scenarios/garcia-molina-typical.toml")),
    ("invitation-deaf-member", include_str!("../../../scenarios/invitation-deaf-member.toml")),
    ("invitation-lossy", include_str!("../../../scenarios/invitation-lossy.toml")),
    ("invitation-merge", include_str!("../../../scenarios/invitation-merge.toml")),
    ("invitation-two-groups", include_str!("../../../scenarios/invitation-two-groups.toml")),
    ("lease-deaf-leader", include_str!("../../../scenarios/lease-deaf-leader.toml")),
    ("lease-drift", include_str!("../../../scenarios/lease-drift.toml")),
    ("member-deaf-to-leader", include_str!("../../../scenarios/member-deaf-to-leader.toml")),
    ("member-one-way", include_str!("../../../scenarios/member-one-way.toml")),
    ("member-partition", include_str!("../../../scenarios/member-partition.toml")),
    ("member-restart", include_str!("../../../scenarios/member-restart.toml")),
    ("member-straggler", include_str!("../../../scenarios/member-straggler.toml")),
    ("monitor-reelection", include_str!("../../../scenarios/monitor-reelection.toml")),
    ("non-transitive", include_str!("../../../scenarios/non-transitive.toml")),
    ("one-way-leader", include_str!("../../../scenarios/one-way-leader.toml")),
    ("partition-heal", include_str!("../../../scenarios/partition-heal.toml")),
    ("ring-candidate-crash", include_str!("../../../scenarios/ring-candidate-crash.toml")),
    ("stoller", include_str!("../../../scenarios/stoller.toml")),
    ("van-steen-figure", include_str!("../../../scenarios/van-steen-figure.toml")),
    ("voters-change", include_str!("../../../scenarios/voters-change.toml")),
];

/// The scenario that ships with elect under `name`, if one does.
pub(crate) fn scenario(name: &str) -> Option<&'static str> {
    SCENARIOS.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

/// Whether `--scenario` names a scenario that ships with elect rather than a file: a word without a `/` and not
/// ending in `.toml` (`stoller`, not `stoller.toml` or `./stoller`).
pub(crate) fn is_name(arg: &str) -> bool {
    !arg.contains(['/', '\\']) && !arg.ends_with(".toml")
}

/// The text of `--scenario ARG`: the scenario of that name that ships with elect, or the file at that path.
pub(crate) fn read(limits: &Limits, arg: &Path) -> Result<Cow<'static, str>, BadInput> {
    let shown = arg.to_string_lossy();
    if is_name(&shown) {
        return scenario(&shown).map(Cow::Borrowed).ok_or_else(|| {
            let names: Vec<&str> = SCENARIOS.iter().map(|(n, _)| *n).collect();
            BadInput(format!(
                "--scenario {shown}: no scenario of that name ships with elect (they are: {}); a file's path \
                 contains a / or ends in .toml",
                names.join(", ")
            ))
        });
    }
    limits.read_scenario(arg).map(Cow::Owned)
}

/// A run the page offers by name: a scenario of `scenarios/`, or an algorithm's showcase run (the tour's row).
#[derive(Debug, serde::Serialize)]
pub(crate) struct Preset {
    /// Its name: the scenario's, or `tour:` and the algorithm's.
    pub(crate) name: String,
    /// What it shows, in a line.
    pub(crate) title: String,
    /// The page's view that runs it (`sim`).
    pub(crate) view: &'static str,
    /// Its form's fields, as the page's query names them.
    pub(crate) params: Vec<(String, String)>,
}

/// Every preset: the scenarios first, then each algorithm's showcase run with 8 processes.
pub(crate) fn presets() -> Vec<Preset> {
    let mut out: Vec<Preset> = SCENARIOS
        .iter()
        .map(|(name, text)| Preset {
            name: (*name).to_owned(),
            title: description(text).unwrap_or_default(),
            view: "sim",
            params: vec![("scenario".to_owned(), (*name).to_owned())],
        })
        .collect();
    for info in registry::all() {
        let cfg = SimConfig::showcase(info, 8, 1);
        out.push(Preset {
            name: format!("tour:{}", info.name),
            title: format!("{}, in its showcase run (as in `elect tour`)", info.title),
            view: "sim",
            params: cfg.flags(),
        });
    }
    out
}

/// A scenario file's `description`, read with the file's own parser.
fn description(text: &str) -> Option<String> {
    elect_scenario::ScenarioFile::parse("preset", text).ok().and_then(|f| f.description)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_scenarios_directory_ships_and_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".toml"))
            .map(|f| f.trim_end_matches(".toml").to_owned())
            .collect();
        files.sort();
        let shipped: Vec<&str> = SCENARIOS.iter().map(|(n, _)| *n).collect();
        assert_eq!(files, shipped, "add the new scenario to SCENARIOS (in name order)");
        for (name, text) in SCENARIOS {
            assert!(elect_scenario::ScenarioFile::parse(name, text).is_ok(), "{name} does not parse");
        }
    }

    #[test]
    fn a_name_is_a_word_and_a_path_has_a_slash_or_the_extension() {
        assert!(is_name("stoller"));
        for path in ["stoller.toml", "./stoller", "scenarios/stoller.toml", "/tmp/x", "a\\b"] {
            assert!(!is_name(path), "{path}");
        }
        let err = read(&Limits::cli(), Path::new("no-such")).unwrap_err().0;
        assert!(err.contains("stoller") && err.contains("no-such"), "{err}");
        assert!(read(&Limits::cli(), Path::new("stoller")).unwrap().contains("invitation"));
    }

    #[test]
    fn every_scenario_and_every_algorithm_has_a_preset_with_a_title() {
        let presets = presets();
        assert_eq!(presets.len(), SCENARIOS.len() + registry::all().len());
        let stoller = presets.iter().find(|p| p.name == "stoller").unwrap();
        assert!(stoller.title.starts_with("Invitation, Stoller's counterexample"), "{}", stoller.title);
        assert!(presets.iter().all(|p| !p.title.is_empty()));
    }
}
