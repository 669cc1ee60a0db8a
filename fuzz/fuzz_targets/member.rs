//! Deployed members of every algorithm `elect node` accepts, in the hands of an adversary
//! (`elect_algos::hostile`): the input picks the algorithm, the number of members (1 to 5) and a script of packets
//! delivered, lost, duplicated and forged (any field of any message kind, any value), timers fired in any order,
//! commands, crashes and restarts. No handler may panic, no member's epoch may go back, and no fencing epoch may
//! be granted twice.
//!
//! `ELECT_FUZZ_ALGORITHM=bully` (a name) fixes the algorithm, so that one run can be given to each.

#![no_main]

use std::sync::OnceLock;

use arbitrary::Unstructured;
use elect_algos::{hostile, member};
use libfuzzer_sys::fuzz_target;

fn algorithms() -> &'static [&'static str] {
    static ALGORITHMS: OnceLock<Vec<&'static str>> = OnceLock::new();
    ALGORITHMS.get_or_init(|| {
        let all: Vec<&str> = member::deployable_algorithms().map(|info| info.name).collect();
        match std::env::var("ELECT_FUZZ_ALGORITHM") {
            Ok(name) => {
                assert!(all.contains(&name.as_str()), "ELECT_FUZZ_ALGORITHM={name}: not one of {all:?}");
                all.into_iter().filter(|&a| a == name).collect()
            }
            Err(_) => all,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let algorithms = algorithms();
    let Ok(a) = u.choose_index(algorithms.len()) else { return };
    let Ok(n) = u.int_in_range(1..=5usize) else { return };
    if let Err(broken) = hostile::run(algorithms[a], n, &mut u) {
        panic!("{}: {broken}", algorithms[a]);
    }
});
