//! The random choices behind one input.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The choices that make one input: a ChaCha8 stream keyed by the campaign's seed and the
/// input's number, so input `i` can be made again without making inputs `0..i`.
pub struct Choices {
    rng: ChaCha8Rng,
}

impl Choices {
    pub fn for_input(seed: u64, index: u64) -> Choices {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(index);
        Choices { rng }
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u32) -> u32 {
        self.rng.gen_range(0..n)
    }

    /// A length or position in `0..n` (`n` > 0), for indexing a slice.
    pub fn index(&mut self, n: usize) -> usize {
        self.rng.gen_range(0..n as u64) as usize
    }

    /// True `num` times in `den`.
    pub fn chance(&mut self, num: u32, den: u32) -> bool {
        self.below(den) < num
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    pub fn byte(&mut self) -> u8 {
        self.rng.gen()
    }

    pub fn u64(&mut self) -> u64 {
        self.rng.gen()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_s_choices_depend_on_the_seed_and_its_number_only() {
        let draw = |seed, index| {
            let mut c = Choices::for_input(seed, index);
            (0..8).map(|_| c.u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 1_000_000), draw(7, 1_000_000));
        assert_ne!(draw(7, 1), draw(7, 2));
        assert_ne!(draw(7, 1), draw(8, 1));
    }
}
