//! The wire format: one UDP datagram is one [`Envelope`], encoded with postcard, followed by its tag in a keyed
//! cluster.
//!
//! ```text
//! version   u16 (varint)   PROTOCOL_VERSION; checked before anything else is decoded
//! cluster   u64            cluster_id(name): members of another cluster drop the packet
//! from, to  u32 (varint)   member ids
//! seq       u64 (varint)   the sender's packet counter within its incarnation, from 1
//! msg       Packet<M>      the member's packet (elect_algos::member::Packet): the sender's incarnation (bumped on
//!                          every start, persisted), the highest fencing epoch it knows, its grant if it leads, and
//!                          an algorithm message, an announcement, a question or a goodbye
//! tag       [u8; 32]       only with a cluster key: keyed BLAKE3 of every byte before it (crate::auth)
//! ```
//!
//! Nothing else may follow the envelope: trailing bytes make a packet malformed. The receiver checks, in order:
//! the version; with a key, the tag (a packet whose last 32 bytes are not the tag of the rest is
//! `unauthenticated`, whatever it holds); that the envelope decodes and fills the packet exactly; the cluster; the
//! recipient. The runtime then checks the sender (a member, not itself), that every field holds a value a member
//! sends (`invalid` otherwise: [`elect_core::Validate`]) and, last, the incarnation and sequence number against the
//! sender's replay window ([`crate::replay`]). Decoding never panics: a packet that fails a
//! check is a [`Drop`] with its reason, which the runtime counts.
//!
//! Without a cluster key packets carry no tag: a keyless cluster trusts its network. A keyed member drops a keyless
//! member's packets as `unauthenticated`, and a keyless member drops a keyed member's as `malformed` (the tag is
//! trailing bytes to it).

use elect_core::{Message, NodeId};
use serde::{Deserialize, Serialize};

use crate::auth::{ClusterKey, TAG_LEN};

/// The protocol version this runtime speaks. Bump it on any change to [`Envelope`], to the tag, or to a message an
/// algorithm puts on the wire. Version 2 added the tag of keyed clusters; version 3 moved the member's header
/// (incarnation, `seen`, `lead`) into the member's packet; version 4 added the member's question, `ask`; version 5
/// the leader monitor's `down` to its heartbeats; version 6 the leader monitor's pre-vote (`pre-vote`,
/// `pre-vote-reply`); version 7 the voting configuration's id to the member's header, and `config` and `config-ack`.
pub const PROTOCOL_VERSION: u16 = 7;

/// The largest datagram the runtime sends or reads.
pub const MAX_PACKET: usize = 64 * 1024;

/// The cluster id of a cluster name: 64-bit FNV-1a of its UTF-8 bytes (stable across platforms and versions).
pub fn cluster_id(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
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
    /// The sender's packet counter in its incarnation (which the message carries).
    pub seq: u64,
    /// The message: the member's packet.
    pub msg: M,
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
    /// In a keyed cluster, its tag is missing or wrong: forged, corrupted, or from a member with another key (or
    /// none).
    Unauthenticated,
    /// Its sequence number was already accepted in the sender's incarnation, or is older than the replay window.
    Replayed,
    /// In a keyless cluster, it came from another address than the one of the member it claims to be from (as
    /// configured, or as its name resolved): forged, or sent by a member whose address changed before this one
    /// resolved its name again.
    WrongAddress,
    /// It decodes, but a field holds a value no member sends: an id that is not a member's, an empty or overlong
    /// list, an epoch beyond the last round a member accepts ([`elect_core::Validate`]). A member with a bug, an
    /// old version or a damaged disk, or a forger.
    Invalid,
}

impl Drop {
    /// Every reason, in counter order.
    pub const ALL: [Self; 10] = [
        Self::Malformed,
        Self::Version,
        Self::Cluster,
        Self::Misaddressed,
        Self::UnknownSender,
        Self::StaleIncarnation,
        Self::Unauthenticated,
        Self::Replayed,
        Self::WrongAddress,
        Self::Invalid,
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
            Self::Unauthenticated => "unauthenticated",
            Self::Replayed => "replayed",
            Self::WrongAddress => "wrong-address",
            Self::Invalid => "invalid",
        }
    }

    /// The reason's index in [`Drop::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Encodes `envelope` into `buf` (cleared first), followed by its tag if there is a `key`.
pub fn encode<M: Message>(
    envelope: &Envelope<M>,
    key: Option<&ClusterKey>,
    buf: &mut Vec<u8>,
) -> Result<(), postcard::Error> {
    buf.clear();
    let bytes = postcard::to_extend(envelope, std::mem::take(buf))?;
    *buf = bytes;
    if let Some(key) = key {
        let tag = key.tag(buf);
        buf.extend_from_slice(&tag);
    }
    Ok(())
}

/// An envelope's fields before its message ([`Envelope`] without `msg`).
#[derive(Serialize)]
struct Header {
    version: u16,
    cluster: u64,
    from: NodeId,
    to: NodeId,
    seq: u64,
}

/// As [`encode`], for an envelope whose message is already encoded (`msg`, postcard bytes): postcard writes a
/// struct as its fields one after another, so an envelope's bytes are its other fields' followed by its message's.
/// The runner sends this way, so that it is compiled once, not once per algorithm's message type.
pub fn encode_parts(
    (cluster, from, to, seq): (u64, NodeId, NodeId, u64),
    msg: &[u8],
    key: Option<&ClusterKey>,
    buf: &mut Vec<u8>,
) -> Result<(), postcard::Error> {
    buf.clear();
    let header = Header { version: PROTOCOL_VERSION, cluster, from, to, seq };
    let bytes = postcard::to_extend(&header, std::mem::take(buf))?;
    *buf = bytes;
    buf.extend_from_slice(msg);
    if let Some(key) = key {
        let tag = key.tag(buf);
        buf.extend_from_slice(&tag);
    }
    Ok(())
}

/// Decodes a datagram addressed to member `me` of cluster `cluster`, checking the version, the tag (with a `key`),
/// the envelope's shape, the cluster and the recipient. Sender checks (membership, incarnation, replays) are the
/// runtime's.
pub fn decode<M: Message>(
    bytes: &[u8],
    cluster: u64,
    me: NodeId,
    key: Option<&ClusterKey>,
) -> Result<Envelope<M>, Drop> {
    let (version, _) = postcard::take_from_bytes::<u16>(bytes).map_err(|_| Drop::Malformed)?;
    if version != PROTOCOL_VERSION {
        return Err(Drop::Version);
    }
    let envelope = match key {
        Some(key) => {
            let split = bytes.len().checked_sub(TAG_LEN).ok_or(Drop::Unauthenticated)?;
            let (envelope, tag) = bytes.split_at(split);
            if !key.verify(envelope, tag) {
                return Err(Drop::Unauthenticated);
            }
            envelope
        }
        None => bytes,
    };
    let (envelope, rest) = postcard::take_from_bytes::<Envelope<M>>(envelope).map_err(|_| Drop::Malformed)?;
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
    use elect_algos::bully::Msg as Bully;
    use elect_algos::member::{Body, ConfigId, Packet};
    use elect_algos::monitor::MonitorMsg;
    use elect_core::{Epoch, Message};

    type Msg = Packet<Bully>;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn envelope(body: Body<Bully>) -> Envelope<Msg> {
        Envelope {
            version: PROTOCOL_VERSION,
            cluster: cluster_id("test"),
            from: NodeId(2),
            to: NodeId(1),
            seq: 9,
            msg: Packet {
                incarnation: 3,
                seen: Epoch::of(1, NodeId(2)),
                lead: Some(Epoch::of(1, NodeId(2))),
                config: ConfigId::INITIAL,
                body,
            },
        }
    }

    fn key(secret: &str) -> ClusterKey {
        ClusterKey::from_secret(secret.as_bytes()).unwrap()
    }

    fn decode_test(bytes: &[u8], key: Option<&ClusterKey>) -> Result<Envelope<Msg>, Drop> {
        decode::<Msg>(bytes, cluster_id("test"), NodeId(1), key)
    }

    #[test]
    fn an_envelope_encoded_in_parts_is_the_envelope_encoded_whole() {
        let e = envelope(Body::Algorithm(Bully::Ok { epoch: Epoch::from_bits(4) }));
        let msg = postcard::to_allocvec(&e.msg).unwrap();
        for key in [None, Some(key("k"))] {
            let (mut whole, mut parts) = (Vec::new(), vec![7; 3]);
            encode(&e, key.as_ref(), &mut whole).unwrap();
            encode_parts((e.cluster, e.from, e.to, e.seq), &msg, key.as_ref(), &mut parts).unwrap();
            assert_eq!(parts, whole);
            assert_eq!(decode_test(&parts, key.as_ref()), Ok(e.clone()));
        }
    }

    #[test]
    fn envelopes_round_trip_and_are_checked() {
        let mut buf = Vec::new();
        let e = envelope(Body::Algorithm(Bully::Ok { epoch: Epoch::from_bits(4) }));
        encode(&e, None, &mut buf).unwrap();
        assert_eq!(decode_test(&buf, None), Ok(e.clone()));
        assert_eq!(decode::<Msg>(&buf, cluster_id("other"), NodeId(1), None), Err(Drop::Cluster));
        assert_eq!(decode::<Msg>(&buf, cluster_id("test"), NodeId(3), None), Err(Drop::Misaddressed));
        let mut longer = buf.clone();
        longer.push(0);
        assert_eq!(decode_test(&longer, None), Err(Drop::Malformed));
        encode(&Envelope { version: 1, ..e }, None, &mut buf).unwrap();
        assert_eq!(decode_test(&buf, None), Err(Drop::Version));
        assert_eq!(decode_test(&[], None), Err(Drop::Malformed));
    }

    #[test]
    fn keyed_envelopes_carry_a_tag_that_every_bit_of_the_packet_depends_on() {
        let k = key("cluster secret");
        let e = envelope(Body::Algorithm(Bully::Election { epoch: Epoch::from_bits(7) }));
        let (mut plain, mut keyed) = (Vec::new(), Vec::new());
        encode(&e, None, &mut plain).unwrap();
        encode(&e, Some(&k), &mut keyed).unwrap();
        assert_eq!(keyed.len(), plain.len() + TAG_LEN);
        assert_eq!(keyed[..plain.len()], plain[..]);
        assert_eq!(decode_test(&keyed, Some(&k)), Ok(e.clone()));
        // Every flipped bit past the version byte fails the tag; one in the version byte fails the version (or, the
        // varint's continuation bit, makes it unreadable).
        for bit in 0..keyed.len() * 8 {
            let mut flipped = keyed.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            let got = decode_test(&flipped, Some(&k));
            match bit {
                0..7 => assert_eq!(got, Err(Drop::Version), "bit {bit}"),
                7 => assert_eq!(got, Err(Drop::Malformed), "bit {bit}"),
                _ => assert_eq!(got, Err(Drop::Unauthenticated), "bit {bit}"),
            }
        }
        // Another key, no tag, a cut tag, and a keyed packet at a keyless member.
        assert_eq!(decode_test(&keyed, Some(&key("another secret"))), Err(Drop::Unauthenticated));
        assert_eq!(decode_test(&plain, Some(&k)), Err(Drop::Unauthenticated));
        assert_eq!(decode_test(&keyed[..keyed.len() - 1], Some(&k)), Err(Drop::Unauthenticated));
        assert_eq!(decode_test(&keyed[..2], Some(&k)), Err(Drop::Unauthenticated));
        assert_eq!(decode_test(&keyed, None), Err(Drop::Malformed));
        // The tag is checked before the cluster and the recipient: an authentic packet for another is still refused.
        assert_eq!(decode::<Msg>(&keyed, cluster_id("test"), NodeId(3), Some(&k)), Err(Drop::Misaddressed));
    }

    #[test]
    fn an_authentic_tag_over_garbage_still_makes_a_malformed_packet() {
        let k = key("k");
        let mut bytes = vec![PROTOCOL_VERSION as u8, 0xff, 0xff, 0xff];
        let tag = k.tag(&bytes);
        bytes.extend_from_slice(&tag);
        assert_eq!(decode_test(&bytes, Some(&k)), Err(Drop::Malformed));
    }

    #[test]
    fn random_bytes_and_truncations_never_panic() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let k = key("k");
        let mut buf = Vec::new();
        encode(&envelope(Body::Announce), None, &mut buf).unwrap();
        for cut in 0..buf.len() {
            assert!(decode_test(&buf[..cut], None).is_err());
        }
        encode(&envelope(Body::Announce), Some(&k), &mut buf).unwrap();
        for cut in 0..buf.len() {
            assert!(decode_test(&buf[..cut], Some(&k)).is_err());
        }
        for _ in 0..20_000 {
            let len = rng.next_u32() as usize % 64;
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            if rng.next_u32() % 2 == 0 && len > 1 {
                bytes[0] = PROTOCOL_VERSION as u8; // Past the version check, into the rest of the decoder.
            }
            let _ = decode_test(&bytes, None);
            assert!(decode_test(&bytes, Some(&k)).is_err());
        }
    }

    #[test]
    fn packet_kinds_are_the_algorithms_then_the_members() {
        type P = Packet<MonitorMsg<Bully>>;
        let kinds = P::kinds();
        assert_eq!(kinds[..3], ["election", "ok", "coordinator"]);
        let members = ["announce", "leaving", "ask", "transfer", "lease", "lease-ack", "config", "config-ack"];
        assert_eq!(kinds[kinds.len() - 8..], members);
        let packet = |body| P { incarnation: 1, seen: Epoch::ZERO, lead: None, config: ConfigId::INITIAL, body };
        let heartbeat =
            packet(Body::Algorithm(MonitorMsg::Heartbeat { epoch: Epoch::from_bits(1), seq: 1, down: None }));
        assert_eq!(kinds[heartbeat.kind_index()], heartbeat.kind());
        assert_eq!(heartbeat.kind(), "heartbeat");
        let lease = [
            packet(Body::Transfer { to: elect_core::NodeId(2) }),
            packet(Body::Lease { round: 1 }),
            packet(Body::LeaseAck { round: 2 }),
        ];
        for p in [packet(Body::Announce), packet(Body::Leaving), packet(Body::Ask)].into_iter().chain(lease) {
            assert_eq!(kinds[p.kind_index()], p.kind());
        }
    }

    #[test]
    fn cluster_ids_are_fnv1a() {
        assert_eq!(cluster_id(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(cluster_id("a"), 0xaf63_dc4c_8601_ec8c);
    }

    /// A packet the decoder may be given: arbitrary bytes, or a real packet (keyed or not) with bytes replaced,
    /// inserted and cut, so that the cases reach past the version check and the tag into the envelope's decoder.
    fn packets() -> impl Strategy<Value = (Vec<u8>, bool)> {
        let arbitrary = proptest::collection::vec(any::<u8>(), 0..200).prop_map(|b| (b, false));
        let mutated = (any::<bool>(), any::<u64>(), any::<u64>(), proptest::collection::vec(any::<(u16, u8)>(), 0..6))
            .prop_map(|(keyed, seq, seen, edits)| {
                let mut e = envelope(Body::Algorithm(Bully::Election { epoch: Epoch::from_bits(seen.rotate_left(7)) }));
                e.seq = seq;
                e.msg.seen = Epoch::from_bits(seen);
                let mut bytes = Vec::new();
                encode(&e, None, &mut bytes).unwrap();
                for (at, byte) in edits {
                    let at = usize::from(at) % (bytes.len() + 1);
                    match byte % 3 {
                        0 if at < bytes.len() => bytes[at] = byte,
                        1 => bytes.insert(at, byte),
                        _ => bytes.truncate(at.max(1)),
                    }
                }
                if keyed {
                    // A tag made with the right key: the mutated envelope gets past authentication.
                    let tag = key("prop").tag(&bytes);
                    bytes.extend_from_slice(&tag);
                }
                (bytes, keyed)
            });
        prop_oneof![arbitrary, mutated]
    }

    proptest! {
        // Drawn from a fixed seed, so every run of the suite checks the same cases (PROPTEST_RNG_SEED draws others).
        #![proptest_config({
            let mut config = ProptestConfig::default();
            if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
                config.rng_seed = proptest::test_runner::RngSeed::Fixed(0);
            }
            config
        })]
        #[test]
        fn decoding_any_bytes_never_panics((bytes, keyed) in packets()) {
            let k = key("prop");
            let with_key = decode::<MonitorMsg<Msg>>(&bytes, cluster_id("test"), NodeId(1), Some(&k));
            let _ = decode::<MonitorMsg<Msg>>(&bytes, cluster_id("test"), NodeId(1), None);
            let _ = decode_test(&bytes, Some(&k));
            let _ = decode_test(&bytes, None);
            if !keyed {
                // Bytes without the right tag never pass a keyed member's check.
                prop_assert!(with_key.is_err());
            }
        }
    }
}
