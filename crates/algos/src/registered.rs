//! The list of built-in algorithms, which the registry (`registry.rs`) and `AnyAlgorithm` (`any.rs`) are both
//! made from.

/// Every built-in algorithm in presentation order, each as `Variant: Type`, handed to the macro `$then`. `[boxed]`
/// marks an algorithm whose process `AnyProcess` holds in a box, as it is much larger than the others (`any.rs`
/// says why).
macro_rules! registered {
    ($then:ident) => {
        $then!(
            Bully: crate::bully::Bully,
            GarciaMolina: crate::garcia_molina::GarciaMolina [boxed],
            LeLann: crate::lelann::LeLann,
            ChangRoberts: crate::chang_roberts::ChangRoberts,
            RingParticipant: crate::ring_participant::RingParticipant,
            HirschbergSinclair: crate::hirschberg_sinclair::HirschbergSinclair,
            Franklin: crate::franklin::Franklin,
            Peterson: crate::peterson::Peterson,
            Invitation: crate::invitation::Invitation [boxed],
            FloodMax: crate::floodmax::FloodMax,
            OptFloodMax: crate::floodmax::OptFloodMax,
            SyncLcr: crate::sync_lcr::SyncLcr,
            AdHoc: crate::ad_hoc::AdHoc [boxed],
            TimestampFlooding: crate::timestamp_flooding::TimestampFlooding,
        );
    };
}
pub(crate) use registered;
