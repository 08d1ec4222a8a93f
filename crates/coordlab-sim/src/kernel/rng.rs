//! Seeded randomness split into independent streams.
//!
//! One run has one seed. Each subsystem draws from its own ChaCha8 stream (same key, a
//! different stream number), so an extra draw by the network never shifts what a worker draws.
//! ChaCha8 is specified bit for bit, so the draws are the same on every target.

use super::ids::NodeId;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The generator every stream uses.
pub type SimRng = ChaCha8Rng;

/// Which independent stream to draw from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Network,
    Workload,
    /// Timer lateness ([`super::timing::Timing::timer_jitter_us`]); drawn only when it is on.
    Timers,
    Node(NodeId),
}

impl Stream {
    fn number(self) -> u64 {
        match self {
            Stream::Network => 1,
            Stream::Workload => 2,
            Stream::Timers => 3,
            Stream::Node(id) => 1_000 + u64::from(id.0),
        }
    }
}

/// Creates the generator of one stream of a run.
pub fn stream(seed: u64, which: Stream) -> SimRng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(which.number());
    rng
}

/// A probability as an integer ratio, so no floating point enters a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ratio {
    pub numerator: u32,
    pub denominator: u32,
}

impl Ratio {
    pub const NEVER: Ratio = Ratio {
        numerator: 0,
        denominator: 1,
    };

    pub fn per_million(numerator: u32) -> Ratio {
        Ratio {
            numerator,
            denominator: 1_000_000,
        }
    }

    /// Draws once; `true` with probability numerator/denominator. Never draws for `NEVER`,
    /// so links without loss consume no randomness.
    pub fn happens(self, rng: &mut SimRng) -> bool {
        if self.numerator == 0 || self.denominator == 0 {
            return false;
        }
        rng.gen_range(0..self.denominator) < self.numerator
    }
}

/// A uniform draw from an inclusive range of microseconds.
pub fn between_us(rng: &mut SimRng, min_us: u64, max_us: u64) -> u64 {
    if max_us <= min_us {
        min_us
    } else {
        rng.gen_range(min_us..=max_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_of_one_seed_are_independent() {
        let mut network = stream(7, Stream::Network);
        let mut worker = stream(7, Stream::Node(NodeId(1)));
        let a: Vec<u64> = (0..4).map(|_| network.gen()).collect();
        let b: Vec<u64> = (0..4).map(|_| worker.gen()).collect();
        assert_ne!(a, b);
        // Drawing more from the network does not change the worker's next value.
        let mut worker_again = stream(7, Stream::Node(NodeId(1)));
        let _: u64 = network.gen();
        assert_eq!(b[0], worker_again.gen::<u64>());
    }

    #[test]
    fn same_seed_same_draws() {
        let mut a = stream(99, Stream::Workload);
        let mut b = stream(99, Stream::Workload);
        assert_eq!(a.gen::<u64>(), b.gen::<u64>());
    }

    #[test]
    fn ratio_extremes() {
        let mut rng = stream(1, Stream::Network);
        assert!(!Ratio::NEVER.happens(&mut rng));
        assert!(Ratio {
            numerator: 5,
            denominator: 5
        }
        .happens(&mut rng));
    }
}
