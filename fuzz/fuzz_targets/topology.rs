//! The topology-file parser (`--topology file:PATH`) on arbitrary text: it must never panic, and a file it accepts
//! has links between distinct vertices below its vertex count, each listed once.

#![no_main]

use std::collections::BTreeSet;
use std::path::Path;

use elect_scenario::EdgeFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(file) = EdgeFile::parse(Path::new("fuzz.txt"), text) {
        assert!(!file.links.is_empty());
        let mut seen = BTreeSet::new();
        for &(u, v) in file.links.iter() {
            assert!(u != v && (u.max(v) as usize) < file.nodes);
            assert!(seen.insert((u.min(v), u.max(v))));
        }
    }
});
