//! The runtime's packet decoder on arbitrary bytes: it must never panic, with a cluster key or without.
//!
//! The input is decoded three ways: as it is by a keyless member, as it is by a keyed member (which must refuse it:
//! it carries no tag made with the key), and with the right tag appended, so that a keyed member's decoder gets
//! past authentication and into the envelope.

#![no_main]

use elect_algos::bully::Msg as Bully;
use elect_algos::member::Packet as Member;
use elect_algos::monitor::MonitorMsg;
use elect_core::NodeId;
use elect_net::ClusterKey;
use elect_net::wire::{self, Envelope};
use libfuzzer_sys::fuzz_target;

/// The packets of Bully inside the leader monitor, the runtime's most common message type.
type Msg = Member<MonitorMsg<Bully>>;
type Packet = Envelope<Msg>;

fuzz_target!(|data: &[u8]| {
    let cluster = wire::cluster_id("fuzz");
    let me = NodeId(1);
    let key = ClusterKey::from_secret(b"fuzz").expect("a non-empty secret");

    if let Ok(packet) = wire::decode::<Msg>(data, cluster, me, None) {
        // Whatever decodes encodes again, into a packet that decodes to the same value.
        let mut again = Vec::new();
        wire::encode::<Msg>(&packet, None, &mut again).expect("a decoded packet encodes");
        let back: Packet = wire::decode(&again, cluster, me, None).expect("and decodes again");
        assert_eq!(back, packet);
    }

    // Without a tag made with the key, a keyed member refuses it (the 2^-256 chance of a matching tag aside).
    let _ = wire::decode::<Msg>(data, cluster, me, Some(&key));

    let mut signed = data.to_vec();
    signed.extend_from_slice(&key.tag(data));
    // With the right tag, a keyed member decodes exactly what a keyless member decodes from the bare bytes.
    let keyed = wire::decode::<Msg>(&signed, cluster, me, Some(&key)).ok();
    assert_eq!(keyed, wire::decode::<Msg>(data, cluster, me, None).ok());
});
