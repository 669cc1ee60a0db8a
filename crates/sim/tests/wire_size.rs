//! A message type that says its own size on the wire ([`Message::wire_size`]) must say the encoding's exactly:
//! the simulator counts bits from it.

use elect_algos::hostile::Forge;
use elect_algos::member::{self, DeployTiming};
use elect_algos::monitor::{Bare, MonitorNetwork};
use elect_algos::synchronizers::Choice;
use elect_algos::{Algorithm, Driver, Facts, Params};
use elect_core::{Duration, InT, Message, NodeId, Prefer, Process, Rank, varint_len};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// postcard's own answer: the length of the encoding.
fn postcard_size<T: Serialize + ?Sized>(value: &T) -> u64 {
    postcard::to_allocvec(value).expect("the value encodes").len() as u64
}

#[test]
fn a_varint_is_as_long_as_postcard_makes_it() {
    for bits in 0..64 {
        for v in [1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) + 1] {
            assert_eq!(varint_len(v), postcard_size(&v), "{v}");
        }
    }
    assert_eq!(varint_len(u64::MAX), postcard_size(&u64::MAX));
}

#[test]
fn a_rank_is_as_long_as_postcard_makes_it() {
    for prefer in [Prefer::Highest, Prefer::Lowest] {
        for attr in [0, 1, 127, 128, Rank::MAX_ATTR] {
            for id in [0, 1, 63, 64, 8191, 8192, u32::MAX] {
                let rank = Rank::new(prefer, attr, NodeId(id));
                assert_eq!(rank.wire_size(), postcard_size(&rank), "{rank:?}");
            }
        }
    }
}

/// Forges messages of each process type it is handed and, for those that say their size, compares it with the
/// encoding's. Says how many it forged, and how many of them said their size.
struct Forged {
    seed: u64,
    messages: usize,
}

impl Driver for Forged {
    type Output = (usize, usize);
    fn drive<A: Algorithm>(self, _: A) -> (usize, usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let (mut compared, mut said_own) = (0, 0);
        for _ in 0..self.messages {
            let mut bytes = vec![0u8; rng.random_range(8..256)];
            rng.fill(&mut bytes[..]);
            let mut u = arbitrary::Unstructured::new(&bytes);
            let Some(msg) = Forge::make::<<A::Process as Process>::Msg>(&mut u) else { continue };
            if let Some(said) = msg.wire_size() {
                assert_eq!(said, postcard_size(&msg), "{} {msg:?}", A::INFO.name);
                said_own += 1;
            }
            compared += 1;
        }
        (compared, said_own)
    }
}

/// At least a hundred of the 400 forged messages decoded, and, where the type says its size, every one said it.
fn enough(what: &str, (compared, said_own): (usize, usize)) -> bool {
    assert!(compared > 100, "{what}: only {compared} messages forged");
    assert!(said_own == 0 || said_own == compared, "{what}: {said_own} of {compared} messages said their size");
    said_own > 0
}

#[test]
fn every_message_of_every_process_the_simulator_runs_is_sized_as_postcard_encodes_it() {
    let network = MonitorNetwork {
        facts: Facts::new(5, 10, 5),
        hops: 1,
        logical_ring: false,
        delay_bound: Duration::from_ticks(1000),
    };
    let forged = |seed| Forged { seed, messages: 400 };
    let params = Params::new();
    let mut saying = Vec::new();
    for (seed, info) in (1..).zip(elect_algos::registry::all()) {
        let name = info.name;
        if enough(name, elect_algos::dispatch(name, &params, forged(seed)).unwrap()) {
            saying.push(name);
        }
        let bare = Bare { driver: forged(seed), network, heartbeat: InT(2) };
        if let Ok(monitored) = elect_algos::dispatch(name, &params, bare).unwrap() {
            enough(&format!("{name} in the monitor"), monitored);
        }
        if member::deployable(info).is_ok() {
            let timing = DeployTiming::new(InT(2), Duration::from_ticks(10_000));
            enough(
                &format!("{name} as a member"),
                member::dispatch(name, &params, timing, network, forged(seed)).unwrap(),
            );
        }
        if elect_algos::runs_on_synchronizers(name) {
            let root = NodeId(1);
            for choice in [Choice::Abd, Choice::Alpha, Choice::Beta { root }, Choice::Gamma { cluster: 2, root }] {
                let synchronized = elect_algos::dispatch_synchronized(name, &params, choice, forged(seed)).unwrap();
                enough(&format!("{name} on {choice:?}"), synchronized);
            }
        }
    }
    let ring = ["chang-roberts", "ring-participant", "hirschberg-sinclair", "franklin", "peterson"];
    assert_eq!(saying, ring, "the message types that say their size");
}
