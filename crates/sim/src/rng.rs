//! The run's random streams: one ChaCha8 generator per purpose, each a stream of the root seed, so that changing
//! one choice does not shift the others.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Independent random streams of one root seed.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub(crate) enum Stream {
    Ids = 1,
    Initiators = 2,
    Attrs = 3,
    Delays = 4,
    Timers = 5,
    Network = 6,
    Topology = 7,
    Mobility = 8,
}

/// The generator of `stream` under `seed`.
pub(crate) fn rng(seed: u64, stream: Stream) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream as u64);
    rng
}
