//! The wire format: one UDP datagram is one [`Envelope`], encoded with postcard.
//!
//! ```text
//! version   u16 (varint)   PROTOCOL_VERSION; checked before anything else is decoded
//! cluster   u64            cluster_id(name): members of another cluster drop the packet
//! from, to  u32 (varint)   member ids
//! incarnation u64 (varint) the sender's incarnation (bumped on every start, persisted)
//! seq       u64 (varint)   the sender's packet counter within its incarnation, from 1
//! seen      u64 (varint)   the highest fencing epoch the sender knows
//! lead      Option<u64>    the fencing epoch of the sender's leadership grant, if it leads
//! body      Body<M>        an algorithm message, or a runtime packet
//! ```
//!
//! Nothing may follow the envelope in this version: trailing bytes make a packet malformed. (A message
//! authentication code, not yet built, will follow it in a later version.) Decoding never panics: a packet that does
//! not decode, or decodes to a foreign cluster, another version, or the wrong recipient, is a [`Drop`] with its
//! reason, which the runtime counts.

use elect_core::{Message, NodeId};
use serde::{Deserialize, Serialize};

/// The protocol version this runtime speaks. Bump it on any change to [`Envelope`] or to a message an algorithm
/// puts on the wire.
pub const PROTOCOL_VERSION: u16 = 1;

/// The largest datagram the runtime sends or reads.
pub const MAX_PACKET: usize = 64 * 1024;

/// The cluster id of a cluster name: 64-bit FNV-1a of its UTF-8 bytes (stable across platforms and versions).
pub fn cluster_id(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// What a packet carries besides its header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Body<M> {
    /// A message of the election algorithm.
    Algorithm(M),
    /// Only the header matters: a new leadership grant (`lead`), or a correction (`seen`) to a leader whose grant
    /// is older than an epoch the sender knows.
    Announce,
    /// The sender is leaving (it resigned or shuts down): if it was your leader, elect another now.
    Leaving,
}

/// One datagram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope<M> {
    /// [`PROTOCOL_VERSION`].
    pub version: u16,
    /// [`cluster_id`] of the cluster's name.
    pub cluster: u64,
    /// The sender.
    pub from: NodeId,
    /// The recipient.
    pub to: NodeId,
    /// The sender's incarnation.
    pub incarnation: u64,
    /// The sender's packet counter in this incarnation.
    pub seq: u64,
    /// The highest fencing epoch the sender knows.
    pub seen: u64,
    /// The fencing epoch of the sender's current leadership grant, if it leads.
    pub lead: Option<u64>,
    /// The payload.
    pub body: Body<M>,
}

/// Why a packet was dropped. Each reason has its own counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Drop {
    /// It does not decode (garbage, truncated, trailing bytes).
    Malformed,
    /// Another protocol version.
    Version,
    /// Another cluster.
    Cluster,
    /// Addressed to another member.
    Misaddressed,
    /// From an id that is not a member (or from this member itself).
    UnknownSender,
    /// From an older incarnation of the sender than one already heard: sent before the sender restarted.
    StaleIncarnation,
}

impl Drop {
    /// Every reason, in counter order.
    pub const ALL: [Self; 6] = [
        Self::Malformed,
        Self::Version,
        Self::Cluster,
        Self::Misaddressed,
        Self::UnknownSender,
        Self::StaleIncarnation,
    ];

    /// The reason's stable lower-case name (logs, metrics).
    pub fn name(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::Version => "version",
            Self::Cluster => "cluster",
            Self::Misaddressed => "misaddressed",
            Self::UnknownSender => "unknown-sender",
            Self::StaleIncarnation => "stale-incarnation",
        }
    }

    /// The reason's index in [`Drop::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Encodes `envelope` into `buf` (cleared first).
pub fn encode<M: Message>(envelope: &Envelope<M>, buf: &mut Vec<u8>) -> Result<(), postcard::Error> {
    buf.clear();
    let bytes = postcard::to_extend(envelope, std::mem::take(buf))?;
    *buf = bytes;
    Ok(())
}

/// Decodes a datagram addressed to member `me` of cluster `cluster`, checking the version, the cluster and the
/// recipient. Sender checks (membership, incarnation) are the runtime's.
pub fn decode<M: Message>(bytes: &[u8], cluster: u64, me: NodeId) -> Result<Envelope<M>, Drop> {
    let (version, _) = postcard::take_from_bytes::<u16>(bytes).map_err(|_| Drop::Malformed)?;
    if version != PROTOCOL_VERSION {
        return Err(Drop::Version);
    }
    let (envelope, rest) = postcard::take_from_bytes::<Envelope<M>>(bytes).map_err(|_| Drop::Malformed)?;
    if !rest.is_empty() {
        return Err(Drop::Malformed);
    }
    if envelope.cluster != cluster {
        return Err(Drop::Cluster);
    }
    if envelope.to != me {
        return Err(Drop::Misaddressed);
    }
    Ok(envelope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use elect_algos::bully::Msg;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn envelope(body: Body<Msg>) -> Envelope<Msg> {
        Envelope {
            version: PROTOCOL_VERSION,
            cluster: cluster_id("test"),
            from: NodeId(2),
            to: NodeId(1),
            incarnation: 3,
            seq: 9,
            seen: 1 << 32 | 2,
            lead: Some(1 << 32 | 2),
            body,
        }
    }

    #[test]
    fn envelopes_round_trip_and_are_checked() {
        let mut buf = Vec::new();
        let e = envelope(Body::Algorithm(Msg::Ok { epoch: 4 }));
        encode(&e, &mut buf).unwrap();
        assert_eq!(decode::<Msg>(&buf, cluster_id("test"), NodeId(1)), Ok(e.clone()));
        assert_eq!(decode::<Msg>(&buf, cluster_id("other"), NodeId(1)), Err(Drop::Cluster));
        assert_eq!(decode::<Msg>(&buf, cluster_id("test"), NodeId(3)), Err(Drop::Misaddressed));
        let mut longer = buf.clone();
        longer.push(0);
        assert_eq!(decode::<Msg>(&longer, cluster_id("test"), NodeId(1)), Err(Drop::Malformed));
        encode(&Envelope { version: 2, ..e }, &mut buf).unwrap();
        assert_eq!(decode::<Msg>(&buf, cluster_id("test"), NodeId(1)), Err(Drop::Version));
        assert_eq!(decode::<Msg>(&[], cluster_id("test"), NodeId(1)), Err(Drop::Malformed));
    }

    #[test]
    fn random_bytes_and_truncations_never_panic() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut buf = Vec::new();
        encode(&envelope(Body::Announce), &mut buf).unwrap();
        for cut in 0..buf.len() {
            assert!(decode::<Msg>(&buf[..cut], cluster_id("test"), NodeId(1)).is_err());
        }
        for _ in 0..20_000 {
            let len = rng.next_u32() as usize % 64;
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            if rng.next_u32() % 2 == 0 && len > 1 {
                bytes[0] = PROTOCOL_VERSION as u8; // Past the version check, into the rest of the decoder.
            }
            let _ = decode::<Msg>(&bytes, cluster_id("test"), NodeId(1));
        }
    }

    #[test]
    fn cluster_ids_are_fnv1a() {
        assert_eq!(cluster_id(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(cluster_id("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
