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

/// Every round algorithm (the registry's `round_registry!`) on every synchronizer, each as `Variant: RoundAlgorithm
/// [Synchronizer]`, handed to the macro `$then`: the variants of `AnySynchronized` (`any.rs`). A round algorithm added
/// to the registry goes here too, once on each synchronizer; a test fails until it does.
macro_rules! synchronized {
    ($then:ident) => {
        $then!(
            FloodMaxAbd: crate::floodmax::FloodMax [Abd],
            FloodMaxAlpha: crate::floodmax::FloodMax [Alpha],
            FloodMaxBeta: crate::floodmax::FloodMax [Beta] [boxed],
            FloodMaxGamma: crate::floodmax::FloodMax [Gamma] [boxed],
            OptFloodMaxAbd: crate::floodmax::OptFloodMax [Abd],
            OptFloodMaxAlpha: crate::floodmax::OptFloodMax [Alpha],
            OptFloodMaxBeta: crate::floodmax::OptFloodMax [Beta] [boxed],
            OptFloodMaxGamma: crate::floodmax::OptFloodMax [Gamma] [boxed],
            SyncLcrAbd: crate::sync_lcr::SyncLcr [Abd],
            SyncLcrAlpha: crate::sync_lcr::SyncLcr [Alpha],
            SyncLcrBeta: crate::sync_lcr::SyncLcr [Beta] [boxed],
            SyncLcrGamma: crate::sync_lcr::SyncLcr [Gamma] [boxed],
        );
    };
}
pub(crate) use synchronized;
