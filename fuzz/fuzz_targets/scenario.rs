//! The scenario-file parser (`elect sim --scenario`) on arbitrary text: it must never panic, and what it accepts
//! is a configuration whose command line parses back.

#![no_main]

use elect_scenario::ScenarioFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(file) = ScenarioFile::parse("fuzz.toml", text) {
        let _ = file.config.command_line();
        // What a small file describes, the simulator's own checks judge without panicking either (the size limits
        // that keep large ones from taking the memory are the command line's).
        let fixed = file.config.topology.as_ref().and_then(elect_scenario::TopologyKind::fixed_size);
        if file.config.nodes <= 64 && fixed.is_none_or(|n| n <= 64) {
            let _ = elect_scenario::Scenario::check(&file.config);
        }
    }
});
