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

/// Every round algorithm (the registry's `round_registry!`) on every synchronizer, each as `Variant: Type`,
/// handed to the macro `$then`: the variants of `AnySynchronized` (`any.rs`). A round algorithm added to the
/// registry goes here too, once on each synchronizer; a test fails until it does.
macro_rules! synchronized {
    ($then:ident) => {
        $then!(
            FloodMaxAbd: crate::synchronizers::Synchronized<crate::floodmax::FloodMax, crate::synchronizers::Abd>,
            FloodMaxAlpha: crate::synchronizers::Synchronized<crate::floodmax::FloodMax, crate::synchronizers::Alpha>,
            FloodMaxBeta: crate::synchronizers::Synchronized<crate::floodmax::FloodMax, crate::synchronizers::Beta> [boxed],
            FloodMaxGamma: crate::synchronizers::Synchronized<crate::floodmax::FloodMax, crate::synchronizers::Gamma> [boxed],
            OptFloodMaxAbd: crate::synchronizers::Synchronized<crate::floodmax::OptFloodMax, crate::synchronizers::Abd>,
            OptFloodMaxAlpha:
                crate::synchronizers::Synchronized<crate::floodmax::OptFloodMax, crate::synchronizers::Alpha>,
            OptFloodMaxBeta: crate::synchronizers::Synchronized<crate::floodmax::OptFloodMax, crate::synchronizers::Beta> [boxed],
            OptFloodMaxGamma:
                crate::synchronizers::Synchronized<crate::floodmax::OptFloodMax, crate::synchronizers::Gamma> [boxed],
            SyncLcrAbd: crate::synchronizers::Synchronized<crate::sync_lcr::SyncLcr, crate::synchronizers::Abd>,
            SyncLcrAlpha: crate::synchronizers::Synchronized<crate::sync_lcr::SyncLcr, crate::synchronizers::Alpha>,
            SyncLcrBeta: crate::synchronizers::Synchronized<crate::sync_lcr::SyncLcr, crate::synchronizers::Beta> [boxed],
            SyncLcrGamma: crate::synchronizers::Synchronized<crate::sync_lcr::SyncLcr, crate::synchronizers::Gamma> [boxed],
        );
    };
}
pub(crate) use synchronized;
