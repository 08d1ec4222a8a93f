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
        let elapsed = now_us.saturating_sub(self.base_true_us);
        let scaled = if self.drift_ppm == 0 {
            elapsed
        } else {
            scale_down(elapsed, self.rate())
        };
        let local = i128::from(self.base_local_us) + i128::from(scaled);
        local.clamp(0, i128::from(u64::MAX >> 1)) as u64
    }

    /// Local microseconds per million true ones: 500,000 to 1,500,000.
    fn rate(&self) -> u64 {
        (1_000_000 + self.drift_ppm) as u64
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
        scale_up(local_us, self.rate()).min(u64::MAX >> 1)
    }

    fn rebase(&mut self, now_us: u64) {
        self.base_local_us = self.read_us(now_us) as i64;
        self.base_true_us = now_us;
    }
}

/// ⌊`us` × `rate` / 10⁶⌋, saturating. Split at whole millions so that no product needs 128 bits:
/// a 128-bit division would bring compiler_builtins' `u128_div_rem` (about 1 KiB) into every
/// browser bundle. With `us` = q·10⁶ + r the result is q·rate + ⌊r·rate / 10⁶⌋ exactly, and
/// r·rate < 10⁶ · 1.5·10⁶ fits in 64 bits.
fn scale_down(us: u64, rate: u64) -> u64 {
    let (q, r) = (us / 1_000_000, us % 1_000_000);
    q.saturating_mul(rate).saturating_add(r * rate / 1_000_000)
}

/// ⌈`us` × 10⁶ / `rate`⌉, saturating; the same split at whole multiples of `rate`.
fn scale_up(us: u64, rate: u64) -> u64 {
    let (q, r) = (us / rate, us % rate);
    q.saturating_mul(1_000_000)
        .saturating_add((r * 1_000_000).div_ceil(rate))
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

    /// The 64-bit split computes exactly what the 128-bit formulas give, clamped as the clock
    /// clamps, at the extremes of drift, offset and time.
    #[test]
    fn readings_and_durations_match_the_128_bit_formulas() {
        let cap = i128::from(u64::MAX >> 1);
        let times = [
            0,
            1,
            999_999,
            1_000_000,
            1_234_567_891,
            u64::MAX / 3,
            u64::MAX - 1,
            u64::MAX,
        ];
        for drift in [-MAX_DRIFT_PPM, -123_457, -1, 1, 77_777, MAX_DRIFT_PPM] {
            for base_local in [i64::MIN, -5_000_000, 0, 42, i64::MAX] {
                let c = LocalClock {
                    base_true_us: 1_000,
                    base_local_us: base_local,
                    drift_ppm: drift,
                };
                for now in times {
                    let elapsed = i128::from(now.saturating_sub(1_000));
                    let scaled = elapsed * i128::from(1_000_000 + drift) / 1_000_000;
                    let want = (i128::from(base_local) + scaled).clamp(0, cap) as u64;
                    assert_eq!(
                        c.read_us(now),
                        want,
                        "drift {drift}, base {base_local}, now {now}"
                    );
                }
            }
            let c = LocalClock {
                drift_ppm: drift,
                ..LocalClock::default()
            };
            for local in times {
                let rate = (1_000_000 + drift) as u128;
                let want = (u128::from(local) * 1_000_000).div_ceil(rate).min(cap as u128) as u64;
                assert_eq!(c.true_duration_us(local), want, "drift {drift}, local {local}");
            }
        }
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
