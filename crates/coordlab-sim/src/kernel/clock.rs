//! A node's local clock: the true simulated time seen through an offset and a drift rate.
//!
//! Participants only ever read their local clock. A clock that runs fast or jumps forward
//! makes its owner believe more time has passed than really has — the root of every lease
//! that expires "early" or "late".

use serde::{Deserialize, Serialize};

/// Largest drift accepted, in parts per million (±50%), so conversions stay well defined.
pub const MAX_DRIFT_PPM: i64 = 500_000;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalClock {
    /// True time at which the current rate took effect.
    base_true_us: u64,
    /// Local reading at `base_true_us`.
    base_local_us: i64,
    drift_ppm: i64,
}

impl LocalClock {
    /// The local reading at true time `now_us`; never below zero.
    pub fn read_us(&self, now_us: u64) -> u64 {
        if self.drift_ppm == 0 && self.base_local_us >= 0 {
            // The common case, without 128-bit division (the same result exactly).
            let elapsed = now_us.saturating_sub(self.base_true_us);
            return (self.base_local_us as u64)
                .saturating_add(elapsed)
                .min(u64::MAX >> 1);
        }
        let elapsed = i128::from(now_us.saturating_sub(self.base_true_us));
        let scaled = elapsed * i128::from(1_000_000 + self.drift_ppm) / 1_000_000;
        let local = i128::from(self.base_local_us) + scaled;
        local.clamp(0, i128::from(u64::MAX >> 1)) as u64
    }

    /// Offset between the local reading and true time at `now_us` (positive: the clock is ahead).
    pub fn offset_us(&self, now_us: u64) -> i64 {
        self.read_us(now_us) as i64 - now_us as i64
    }

    pub fn drift_ppm(&self) -> i64 {
        self.drift_ppm
    }

    /// Jumps the clock by `delta_us` (an NTP step, a VM resumed with a stale clock).
    pub fn jump(&mut self, now_us: u64, delta_us: i64) {
        self.rebase(now_us);
        self.base_local_us = self.base_local_us.saturating_add(delta_us);
    }

    /// Changes the rate from `now_us` on; the reading stays continuous.
    pub fn set_drift(&mut self, now_us: u64, drift_ppm: i64) {
        self.rebase(now_us);
        self.drift_ppm = drift_ppm.clamp(-MAX_DRIFT_PPM, MAX_DRIFT_PPM);
    }

    /// How much true time passes while this clock advances by `local_us`. Timers are set in
    /// local durations ("renew in 10 s by my clock"); the kernel schedules them in true time.
    pub fn true_duration_us(&self, local_us: u64) -> u64 {
        if self.drift_ppm == 0 {
            return local_us.min(u64::MAX >> 1);
        }
        let rate = (1_000_000 + self.drift_ppm) as u128;
        let num = u128::from(local_us) * 1_000_000;
        num.div_ceil(rate).min(u128::from(u64::MAX >> 1)) as u64
    }

    fn rebase(&mut self, now_us: u64) {
        self.base_local_us = self.read_us(now_us) as i64;
        self.base_true_us = now_us;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drift-free fast paths give exactly what the general formula gives.
    #[test]
    fn drift_free_reads_match_the_general_formula() {
        let general = |c: &LocalClock, now: u64| {
            let elapsed = i128::from(now.saturating_sub(c.base_true_us));
            (i128::from(c.base_local_us) + elapsed).clamp(0, i128::from(u64::MAX >> 1)) as u64
        };
        let mut c = LocalClock::default();
        for (at, jump) in [
            (0, 0),
            (1_000, -5_000),
            (9_000, 3_000),
            (20_000, -40_000),
            (30_000, i64::MAX / 2),
        ] {
            c.jump(at, jump);
            for now in [at, at + 1, at + 7_777, u64::MAX / 4] {
                assert_eq!(
                    c.read_us(now),
                    general(&c, now),
                    "after jump {jump} at {at}, read at {now}"
                );
            }
        }
        assert_eq!(c.true_duration_us(12_345), 12_345);
    }

    #[test]
    fn perfect_clock_reads_true_time() {
        let c = LocalClock::default();
        assert_eq!(c.read_us(12_345), 12_345);
        assert_eq!(c.true_duration_us(1_000), 1_000);
    }

    #[test]
    fn fast_clock_runs_ahead_and_fires_timers_early() {
        let mut c = LocalClock::default();
        c.set_drift(0, 100_000); // 10% fast
        assert_eq!(c.read_us(1_000_000), 1_100_000);
        assert_eq!(c.true_duration_us(1_100_000), 1_000_000);
    }

    #[test]
    fn jump_moves_reading_and_keeps_rate() {
        let mut c = LocalClock::default();
        c.jump(1_000, 5_000);
        assert_eq!(c.read_us(1_000), 6_000);
        assert_eq!(c.read_us(2_000), 7_000);
        assert_eq!(c.offset_us(2_000), 5_000);
    }
}
