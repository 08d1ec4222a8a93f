//! Order statistics of a set of measurements, some of which may have hit a cap.
//!
//! A trial that did not finish within the cap is *censored*: all we know is that it would
//! have taken longer than every finished one. Percentiles are therefore taken over all
//! trials with the censored ones ranked last; a percentile that falls on a censored trial is
//! unknown (`None`) rather than a made-up number, and so is the mean if any trial was cut off.

use serde::Serialize;

/// Min, a few percentiles, max and mean of a set of durations in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Trials measured, finished or not.
    pub trials: u32,
    /// Trials that hit the cap without an answer.
    pub censored: u32,
    pub min_us: Option<u64>,
    pub p10_us: Option<u64>,
    pub median_us: Option<u64>,
    pub p90_us: Option<u64>,
    pub p99_us: Option<u64>,
    pub max_us: Option<u64>,
    /// Rounded down to a whole microsecond; `None` if any trial was censored.
    pub mean_us: Option<u64>,
}

/// The value at `percent` by the nearest-rank method: the smallest value with at least
/// `percent`% of the data at or below it. `sorted` holds the finished values in ascending
/// order; `censored` more trials rank after all of them.
pub fn nearest_rank(sorted: &[u64], censored: u32, percent: u32) -> Option<u64> {
    let total = sorted.len() as u64 + u64::from(censored);
    if total == 0 {
        return None;
    }
    // rank = ceil(percent/100 * total), at least 1; integer maths so every target agrees.
    let rank = (u64::from(percent.min(100)) * total).div_ceil(100).max(1);
    sorted.get(rank as usize - 1).copied()
}

impl Summary {
    /// Summarises measurements; `None` marks a censored trial.
    pub fn of(values: &[Option<u64>]) -> Summary {
        let mut sorted: Vec<u64> = values.iter().flatten().copied().collect();
        sorted.sort_unstable();
        let censored = (values.len() - sorted.len()) as u32;
        let at = |p| nearest_rank(&sorted, censored, p);
        let mean_us = if censored == 0 && !sorted.is_empty() {
            let sum: u128 = sorted.iter().map(|v| u128::from(*v)).sum();
            Some((sum / sorted.len() as u128) as u64)
        } else {
            None
        };
        Summary {
            trials: values.len() as u32,
            censored,
            min_us: at(0),
            p10_us: at(10),
            median_us: at(50),
            p90_us: at(90),
            p99_us: at(99),
            // The maximum is the last rank: unknown as soon as one trial was censored.
            max_us: at(100),
            mean_us,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_one_to_ten() {
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(nearest_rank(&v, 0, 0), Some(1));
        assert_eq!(nearest_rank(&v, 0, 10), Some(1));
        assert_eq!(nearest_rank(&v, 0, 11), Some(2));
        assert_eq!(nearest_rank(&v, 0, 50), Some(5));
        assert_eq!(nearest_rank(&v, 0, 90), Some(9));
        assert_eq!(nearest_rank(&v, 0, 99), Some(10));
        assert_eq!(nearest_rank(&v, 0, 100), Some(10));
        assert_eq!(nearest_rank(&[], 0, 50), None);
    }

    #[test]
    fn percentiles_of_a_hundred_values() {
        let values: Vec<Option<u64>> = (1..=100).rev().map(Some).collect();
        let s = Summary::of(&values);
        assert_eq!(s.trials, 100);
        assert_eq!(s.censored, 0);
        assert_eq!(s.min_us, Some(1));
        assert_eq!(s.p10_us, Some(10));
        assert_eq!(s.median_us, Some(50));
        assert_eq!(s.p90_us, Some(90));
        assert_eq!(s.p99_us, Some(99));
        assert_eq!(s.max_us, Some(100));
        assert_eq!(s.mean_us, Some(50)); // 5050 / 100 = 50.5, rounded down
    }

    #[test]
    fn censored_trials_rank_last_and_hide_what_they_cover() {
        // 8 finished, 2 cut off: the median is known, the 90th percentile is not.
        let mut values: Vec<Option<u64>> = (1..=8).map(|v| Some(v * 100)).collect();
        values.extend([None, None]);
        let s = Summary::of(&values);
        assert_eq!(s.censored, 2);
        assert_eq!(s.min_us, Some(100));
        assert_eq!(s.median_us, Some(500));
        assert_eq!(s.p90_us, None);
        assert_eq!(s.max_us, None);
        assert_eq!(s.mean_us, None);
    }

    #[test]
    fn all_censored_knows_nothing() {
        let s = Summary::of(&[None, None, None]);
        assert_eq!(s.censored, 3);
        assert_eq!(s.min_us, None);
        assert_eq!(s.median_us, None);
    }
}
