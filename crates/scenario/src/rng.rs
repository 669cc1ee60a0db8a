//! The run's random streams: one ChaCha8 generator per purpose, each a stream of the root seed, so that changing
//! one choice does not shift the others. The scenario draws its set-up from some (ids, initiators, attributes,
//! topology); the simulator draws from the others (delays, timers, the network, mobility).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Independent random streams of one root seed.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum Stream {
    /// The arrangement of random ids.
    Ids = 1,
    /// Random initiators.
    Initiators = 2,
    /// Random attributes.
    Attrs = 3,
    /// Message delays.
    Delays = 4,
    /// Timer durations drawn from their spans.
    Timers = 5,
    /// Losses and duplicates.
    Network = 6,
    /// Random topologies.
    Topology = 7,
    /// Moving nodes.
    Mobility = 8,
}

/// The generator of `stream` under `seed`.
pub fn rng(seed: u64, stream: Stream) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream as u64);
    rng
}
