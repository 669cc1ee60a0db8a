//! Node states stay compact: the simulator holds a million of them.

#[test]
fn ring_node_states_fit_in_half_a_cache_line_or_one() {
    use std::mem::size_of;
    assert!(size_of::<elect_algos::chang_roberts::ChangRobertsProcess>() <= 32);
    assert!(size_of::<elect_algos::ring_participant::RingParticipantProcess>() <= 32);
    assert!(size_of::<elect_algos::hirschberg_sinclair::HirschbergSinclairProcess>() <= 32);
    assert!(size_of::<elect_algos::peterson::PetersonProcess>() <= 32);
    assert!(size_of::<elect_algos::franklin::FranklinProcess>() <= 64);
}
