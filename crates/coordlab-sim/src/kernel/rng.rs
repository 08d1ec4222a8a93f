//! Seeded randomness split into independent streams.
//!
//! One run has one seed. Each subsystem draws from its own ChaCha8 stream (same key, a
//! different stream number), so an extra draw by the network never shifts what a worker draws.
//! ChaCha8 is specified bit for bit, so the draws are the same on every target.

use super::ids::NodeId;
use rand::{Rng, RngCore, SeedableRng};

/// The generator every stream uses: ChaCha8 with a 64-bit block counter and a 64-bit stream
/// number, drawing exactly what `rand_chacha` 0.3's `ChaCha8Rng` draws (a test holds the two
/// together). `rand_chacha` computes four blocks at a time in portable vector code, about
/// 4 KiB of WebAssembly before wasm-opt in every browser bundle; this computes one block at a
/// time in a plain loop, which is all a simulation's few hundred draws need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimRng {
    key: [u32; 8],
    /// The next block to compute.
    block_counter: u64,
    stream: u64,
    /// The current block's words, and how many of them have been drawn (16: none left).
    words: [u32; 16],
    drawn: usize,
}

impl SimRng {
    /// Switches to stream `stream` of the same key, at the same position in it (as
    /// `ChaCha8Rng::set_stream`).
    pub fn set_stream(&mut self, stream: u64) {
        self.stream = stream;
        if self.drawn < 16 {
            let drawn = self.drawn;
            self.block_counter = self.block_counter.wrapping_sub(1);
            self.next_block();
            self.drawn = drawn;
        }
    }

    fn next_block(&mut self) {
        // "expand 32-byte k", the key, the block counter and the stream number.
        let mut input = [0u32; 16];
        input[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
        input[4..12].copy_from_slice(&self.key);
        input[12] = self.block_counter as u32;
        input[13] = (self.block_counter >> 32) as u32;
        input[14] = self.stream as u32;
        input[15] = (self.stream >> 32) as u32;
        let mut x = input;
        const ROUNDS: [[usize; 4]; 8] = [
            [0, 4, 8, 12],
            [1, 5, 9, 13],
            [2, 6, 10, 14],
            [3, 7, 11, 15],
            [0, 5, 10, 15],
            [1, 6, 11, 12],
            [2, 7, 8, 13],
            [3, 4, 9, 14],
        ];
        // ChaCha8: four double rounds (the columns, then the diagonals).
        for _ in 0..4 {
            for [a, b, c, d] in ROUNDS {
                x[a] = x[a].wrapping_add(x[b]);
                x[d] = (x[d] ^ x[a]).rotate_left(16);
                x[c] = x[c].wrapping_add(x[d]);
                x[b] = (x[b] ^ x[c]).rotate_left(12);
                x[a] = x[a].wrapping_add(x[b]);
                x[d] = (x[d] ^ x[a]).rotate_left(8);
                x[c] = x[c].wrapping_add(x[d]);
                x[b] = (x[b] ^ x[c]).rotate_left(7);
            }
        }
        for (w, (x, i)) in self.words.iter_mut().zip(x.iter().zip(input)) {
            *w = x.wrapping_add(i);
        }
        self.block_counter = self.block_counter.wrapping_add(1);
        self.drawn = 0;
    }
}

impl SeedableRng for SimRng {
    type Seed = [u8; 32];

    fn from_seed(seed: [u8; 32]) -> SimRng {
        let mut key = [0u32; 8];
        for (k, bytes) in key.iter_mut().zip(seed.chunks_exact(4)) {
            *k = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        SimRng {
            key,
            block_counter: 0,
            stream: 0,
            words: [0; 16],
            drawn: 16,
        }
    }
}

impl RngCore for SimRng {
    fn next_u32(&mut self) -> u32 {
        if self.drawn == 16 {
            self.next_block();
        }
        self.drawn += 1;
        self.words[self.drawn - 1]
    }

    fn next_u64(&mut self) -> u64 {
        let low = self.next_u32();
        u64::from(low) | u64::from(self.next_u32()) << 32
    }

    /// Word by word, little-endian; the unused bytes of a last partial word are dropped.
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(4) {
            let word = self.next_u32().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

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
    let mut rng = SimRng::seed_from_u64(seed);
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

    /// The draws (words, 64-bit words, bytes, ranges) are `rand_chacha`'s, across block
    /// boundaries and for several seeds and streams.
    #[test]
    fn draws_what_rand_chacha_draws() {
        use rand_chacha::ChaCha8Rng;
        for seed in [0, 1, 7, 42, u64::MAX] {
            for number in [0, 1, 2, 3, 1_000, 1_007, u64::MAX] {
                let mut ours = SimRng::seed_from_u64(seed);
                let mut theirs = ChaCha8Rng::seed_from_u64(seed);
                ours.set_stream(number);
                theirs.set_stream(number);
                for i in 0..300u32 {
                    match i % 5 {
                        0 => assert_eq!(ours.next_u32(), theirs.next_u32()),
                        1 => assert_eq!(ours.next_u64(), theirs.next_u64()),
                        2 => {
                            let (mut a, mut b) = ([0u8; 7], [0u8; 7]);
                            ours.fill_bytes(&mut a);
                            theirs.fill_bytes(&mut b);
                            assert_eq!(a, b);
                        }
                        3 => assert_eq!(ours.gen_range(0..1_000_000u32), theirs.gen_range(0..1_000_000u32)),
                        _ => assert_eq!(between_us_any(&mut ours), between_us_any(&mut theirs)),
                    }
                }
            }
        }
    }

    /// A stream switched after draws keeps its position, as `ChaCha8Rng`'s does.
    #[test]
    fn set_stream_keeps_the_position() {
        use rand_chacha::ChaCha8Rng;
        let mut ours = SimRng::seed_from_u64(5);
        let mut theirs = ChaCha8Rng::seed_from_u64(5);
        for draws in [3, 16, 21] {
            for _ in 0..draws {
                assert_eq!(ours.next_u32(), theirs.next_u32());
            }
            ours.set_stream(draws);
            theirs.set_stream(draws);
            assert_eq!(ours.next_u64(), theirs.next_u64());
        }
    }

    fn between_us_any(rng: &mut impl Rng) -> u64 {
        rng.gen_range(150_000..=300_000u64)
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
