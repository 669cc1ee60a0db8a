//! Node states stay compact: the simulator holds a million of them.

#[test]
fn ring_node_states_fit_in_half_a_cache_line_or_one() {
    use std::mem::size_of;
    assert!(size_of::<elect_algos::chang_roberts::Node>() <= 32);
    assert!(size_of::<elect_algos::ring_participant::Node>() <= 32);
    assert!(size_of::<elect_algos::hirschberg_sinclair::Node>() <= 32);
    assert!(size_of::<elect_algos::peterson::Node>() <= 32);
    assert!(size_of::<elect_algos::franklin::Node>() <= 64);
}
