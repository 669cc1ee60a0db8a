//! The counterexample-file reader (`elect sim --replay`) on arbitrary text: it must never panic, and a file it
//! accepts has steps, a cycle start among them, and writes back to a file that reads the same.

#![no_main]

use elect_check::CounterexampleFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(file) = CounterexampleFile::parse(text) {
        assert!(!file.actions.is_empty());
        assert!(file.loop_start.is_none_or(|at| at < file.actions.len()));
        assert_eq!(CounterexampleFile::parse(&file.to_json()).expect("what was read reads again"), file);
    }
});
