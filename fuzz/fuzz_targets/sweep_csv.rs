//! The sweep CSV reader (`elect plot --input`) on arbitrary bytes, for every metric: it must never panic, and the
//! points it accepts can be plotted (n a process count, values finite and not negative).

#![no_main]

use elect_viz::{Metric, read_csv};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for metric in [Metric::Election, Metric::Messages, Metric::Time] {
        if let Ok(points) = read_csv(data, metric) {
            for p in &points {
                assert!(p.n > 0);
                assert!(p.measured.is_finite() && p.measured >= 0.0);
                assert!(p.bound.as_ref().is_none_or(|(_, b)| b.is_finite() && *b >= 0.0));
            }
        }
    }
});
