//! Process identities and the one priority order of the code base.
//!
//! Algorithms never compare raw ids. They compare [`Rank`]s, which a [`Ranking`] derives from an id and an
//! optional attribute. "Larger id wins", "smaller id wins" (S004) and `(attr, id)` keys (S001, ad hoc values) are
//! all configurations of the same comparator, so no algorithm has a special case for them.

use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU64;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The identity of a process, as users name it (`--ids 3,1,2`, `--crash 8@0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u32);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Which end of the `(attr, id)` order is the strongest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prefer {
    /// The largest key wins (S000, S001, S003, Garcia-Molina's paper, Lynch). The default.
    #[default]
    Highest,
    /// The smallest key wins (S004's convention).
    Lowest,
}

/// The strength of a process: a larger `Rank` is a stronger process, whatever the configured order.
///
/// A rank packs the direction, the attribute and the id into one `u64`, so comparing two ranks is one integer
/// comparison and the id can always be recovered with [`Rank::id`]. Ranks are only comparable with ranks made by
/// the same [`Ranking`]. The packing never produces zero, so `Option<Rank>` is as small as `Rank`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rank(NonZeroU64);

/// Bit 63 marks "smaller is stronger"; the 62 bits below hold `(attr << 32) | id`, complemented for that order.
const LOWEST_BIT: u64 = 1 << 63;
const PAYLOAD: u64 = (1 << 62) - 1;
/// Bit 62 is 0 in every packed highest-wins rank and 1 in every lowest-wins one; flipping it makes both non-zero
/// without changing the order among ranks of one direction.
const FLIP: u64 = 1 << 62;

impl Rank {
    /// The largest attribute a rank can carry.
    pub const MAX_ATTR: u32 = (1 << 30) - 1;

    /// The rank of `id` with attribute `attr` under the order `prefer`.
    ///
    /// # Panics
    /// If `attr` exceeds [`Rank::MAX_ATTR`]; [`Ranking`] validates attributes before building ranks.
    pub fn new(prefer: Prefer, attr: u32, id: NodeId) -> Self {
        assert!(attr <= Self::MAX_ATTR, "attribute {attr} exceeds {}", Self::MAX_ATTR);
        let payload = (u64::from(attr) << 32) | u64::from(id.0);
        let packed = match prefer {
            Prefer::Highest => payload,
            Prefer::Lowest => LOWEST_BIT | FLIP | (!payload & PAYLOAD),
        };
        Self(NonZeroU64::new(packed ^ FLIP).expect("bit 62 or 63 is set"))
    }

    fn packed(self) -> u64 {
        self.0.get() ^ FLIP
    }

    fn payload(self) -> u64 {
        let packed = self.packed();
        if packed & LOWEST_BIT == 0 { packed } else { !packed & PAYLOAD }
    }

    /// The id this rank belongs to.
    pub fn id(self) -> NodeId {
        NodeId(self.payload() as u32)
    }

    /// The attribute (0 when the ranking has none).
    pub fn attr(self) -> u32 {
        (self.payload() >> 32) as u32
    }

    /// The bytes this rank takes in the wire encoding (see its `Serialize`): what [`crate::Message::wire_size`]
    /// adds up for a message that carries it.
    #[inline(always)]
    pub fn wire_size(self) -> u64 {
        crate::varint_len(self.wire_key())
    }

    /// The key the wire carries: the `(attr, id)` key shifted left by one, with the direction in the low bit.
    #[inline(always)]
    fn wire_key(self) -> u64 {
        (self.payload() << 1) | u64::from(self.prefer() == Prefer::Lowest)
    }

    /// The order this rank was made with.
    pub fn prefer(self) -> Prefer {
        if self.packed() & LOWEST_BIT == 0 { Prefer::Highest } else { Prefer::Lowest }
    }
}

impl fmt::Debug for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.attr(), self.prefer()) {
            (0, Prefer::Highest) => write!(f, "#{}", self.id()),
            (attr, Prefer::Highest) => write!(f, "#{}<{attr}>", self.id()),
            (attr, Prefer::Lowest) => write!(f, "#{}<{attr},lowest>", self.id()),
        }
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.attr() {
            0 => write!(f, "{}", self.id()),
            attr => write!(f, "({attr}, {})", self.id()),
        }
    }
}

/// Human-readable formats (JSON traces) show a rank as its id when it has no attribute and the larger key wins,
/// and as `{"attr": a, "id": i, "prefer": "lowest"}` (the fields that apply) otherwise. Compact formats (the wire)
/// carry the key shifted left by one with the direction in the low bit, so a rank costs as many bytes as its
/// `(attr, id)` key whichever end wins.
impl Serialize for Rank {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let lowest = self.prefer() == Prefer::Lowest;
        if !s.is_human_readable() {
            return s.serialize_u64(self.wire_key());
        }
        if self.attr() == 0 && !lowest {
            return s.serialize_u32(self.id().0);
        }
        Readable { attr: self.attr(), id: self.id(), prefer: self.prefer() }.serialize(s)
    }
}

#[derive(Serialize, Deserialize)]
struct Readable {
    #[serde(default, skip_serializing_if = "is_zero")]
    attr: u32,
    id: NodeId,
    #[serde(default, skip_serializing_if = "is_highest")]
    prefer: Prefer,
}

fn is_zero(attr: &u32) -> bool {
    *attr == 0
}

fn is_highest(prefer: &Prefer) -> bool {
    *prefer == Prefer::Highest
}

impl<'de> Deserialize<'de> for Rank {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Id(u32),
            Keyed(Readable),
        }
        if !d.is_human_readable() {
            let bits = u64::deserialize(d)?;
            let prefer = if bits & 1 == 0 { Prefer::Highest } else { Prefer::Lowest };
            let payload = bits >> 1;
            let attr = (payload >> 32) as u32;
            if attr > Self::MAX_ATTR {
                return Err(serde::de::Error::custom(format!("attribute {attr} exceeds {}", Self::MAX_ATTR)));
            }
            return Ok(Self::new(prefer, attr, NodeId(payload as u32)));
        }
        let Readable { attr, id, prefer } = match Form::deserialize(d)? {
            Form::Id(id) => Readable { attr: 0, id: NodeId(id), prefer: Prefer::Highest },
            Form::Keyed(keyed) => keyed,
        };
        if attr > Self::MAX_ATTR {
            return Err(serde::de::Error::custom(format!("attribute {attr} exceeds {}", Self::MAX_ATTR)));
        }
        Ok(Self::new(prefer, attr, id))
    }
}

/// The configured priority order: a direction and optional per-id attributes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranking {
    prefer: Prefer,
    attrs: BTreeMap<NodeId, u32>,
}

/// An attribute that does not fit in a [`Rank`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrTooLarge {
    /// The node the attribute was given for.
    pub id: NodeId,
    /// The value given.
    pub attr: u32,
}

impl fmt::Display for AttrTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attribute {} of node {} exceeds the maximum {}", self.attr, self.id, Rank::MAX_ATTR)
    }
}

impl std::error::Error for AttrTooLarge {}

impl Ranking {
    /// The default order: the larger id wins, no attributes.
    pub fn new(prefer: Prefer) -> Self {
        Self { prefer, attrs: BTreeMap::new() }
    }

    /// Adds `(attr, id)` keys; ids without an attribute get 0.
    pub fn with_attrs(mut self, attrs: BTreeMap<NodeId, u32>) -> Result<Self, AttrTooLarge> {
        if let Some((&id, &attr)) = attrs.iter().find(|&(_, &a)| a > Rank::MAX_ATTR) {
            return Err(AttrTooLarge { id, attr });
        }
        self.attrs = attrs;
        Ok(self)
    }

    /// The direction of this order.
    pub fn prefer(&self) -> Prefer {
        self.prefer
    }

    /// The attributes given explicitly.
    pub fn attrs(&self) -> &BTreeMap<NodeId, u32> {
        &self.attrs
    }

    /// The rank of `id`.
    pub fn rank(&self, id: NodeId) -> Rank {
        Rank::new(self.prefer, self.attrs.get(&id).copied().unwrap_or(0), id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_is_the_default_order_and_ids_round_trip() {
        let r = Ranking::default();
        assert!(r.rank(NodeId(8)) > r.rank(NodeId(7)));
        assert_eq!(r.rank(NodeId(8)).id(), NodeId(8));
        assert_eq!(r.rank(NodeId(u32::MAX)).id(), NodeId(u32::MAX));
    }

    #[test]
    fn lowest_reverses_the_order_and_keeps_the_id() {
        let r = Ranking::new(Prefer::Lowest);
        assert!(r.rank(NodeId(1)) > r.rank(NodeId(2)));
        assert!(r.rank(NodeId(0)) > r.rank(NodeId(u32::MAX)));
        assert_eq!(r.rank(NodeId(5)).id(), NodeId(5));
        assert_eq!(r.rank(NodeId(5)).prefer(), Prefer::Lowest);
    }

    #[test]
    fn attributes_come_first_and_ids_break_ties() {
        let attrs = BTreeMap::from([(NodeId(1), 9), (NodeId(2), 9), (NodeId(3), 1)]);
        let r = Ranking::new(Prefer::Highest).with_attrs(attrs.clone()).unwrap();
        assert!(r.rank(NodeId(1)) > r.rank(NodeId(3)));
        assert!(r.rank(NodeId(2)) > r.rank(NodeId(1)));
        assert!(r.rank(NodeId(3)) > r.rank(NodeId(100)));
        assert_eq!(r.rank(NodeId(2)).attr(), 9);
        let low = Ranking::new(Prefer::Lowest).with_attrs(attrs).unwrap();
        assert!(low.rank(NodeId(100)) > low.rank(NodeId(3)));
        assert!(low.rank(NodeId(1)) > low.rank(NodeId(2)));
        assert_eq!(low.rank(NodeId(2)).attr(), 9);
    }

    #[test]
    fn an_optional_rank_costs_no_more_than_a_rank() {
        assert_eq!(std::mem::size_of::<Option<Rank>>(), 8);
        let extremes = [(Prefer::Highest, 0, 0), (Prefer::Highest, Rank::MAX_ATTR, u32::MAX), (Prefer::Lowest, 0, 0)];
        for (prefer, attr, id) in extremes.into_iter().chain([(Prefer::Lowest, Rank::MAX_ATTR, u32::MAX)]) {
            let r = Rank::new(prefer, attr, NodeId(id));
            assert_eq!((r.prefer(), r.attr(), r.id()), (prefer, attr, NodeId(id)));
        }
        let lowest = Ranking::new(Prefer::Lowest);
        assert!(lowest.rank(NodeId(0)) > lowest.rank(NodeId(u32::MAX)));
        assert!(Ranking::default().rank(NodeId(u32::MAX)) > Ranking::default().rank(NodeId(0)));
    }

    #[test]
    fn oversized_attributes_are_rejected() {
        let attrs = BTreeMap::from([(NodeId(4), Rank::MAX_ATTR + 1)]);
        let err = Ranking::default().with_attrs(attrs).unwrap_err();
        assert_eq!(err, AttrTooLarge { id: NodeId(4), attr: Rank::MAX_ATTR + 1 });
    }

    #[test]
    fn ranks_are_readable_in_json_and_compact_on_the_wire() {
        let plain = Ranking::default().rank(NodeId(7));
        assert_eq!(serde_json::to_string(&plain).unwrap(), "7");
        assert_eq!(serde_json::from_str::<Rank>("7").unwrap(), plain);
        let keyed = Ranking::default().with_attrs(BTreeMap::from([(NodeId(7), 3)])).unwrap().rank(NodeId(7));
        assert_eq!(serde_json::to_string(&keyed).unwrap(), r#"{"attr":3,"id":7}"#);
        assert_eq!(serde_json::from_str::<Rank>(r#"{"attr":3,"id":7}"#).unwrap(), keyed);
        let low = Ranking::new(Prefer::Lowest).rank(NodeId(7));
        assert_eq!(serde_json::to_string(&low).unwrap(), r#"{"id":7,"prefer":"lowest"}"#);
        assert_eq!(serde_json::from_str::<Rank>(r#"{"id":7,"prefer":"lowest"}"#).unwrap(), low);
        for rank in [
            plain,
            keyed,
            low,
            Ranking::new(Prefer::Lowest).with_attrs(BTreeMap::from([(NodeId(7), 9)])).unwrap().rank(NodeId(7)),
        ] {
            let bytes = postcard::to_allocvec(&rank).unwrap();
            assert_eq!(postcard::from_bytes::<Rank>(&bytes).unwrap(), rank);
        }
        // A rank costs the same on the wire whichever end wins.
        let size = |r: Rank| postcard::to_allocvec(&r).unwrap().len();
        assert_eq!(size(plain), 1);
        assert_eq!(size(low), size(plain));
    }
}
