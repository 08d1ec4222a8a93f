//! Durations in the words of labels and narration. The protocols keep times as integers;
//! only what a reader sees turns them into text, so these live here.

/// Milliseconds as seconds, as exact as the value: `30 s`, `1.5 s`, `0.25 s`.
pub fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1_000) {
        format!("{} s", ms / 1_000)
    } else {
        let millis = format!("{:03}", ms % 1_000);
        format!("{}.{} s", ms / 1_000, millis.trim_end_matches('0'))
    }
}

/// Milliseconds as seconds with one decimal, rounded down, as Redis's own timings are told:
/// `29.8 s`, `10.0 s`.
pub fn tenths(ms: u64) -> String {
    format!("{}.{} s", ms / 1_000, (ms % 1_000) / 100)
}

/// Time of day on a clock, as ShedLock's table shows it (`00:01:05.2`).
pub fn clock_text(us: u64) -> String {
    let tenths = us / (crate::kernel::time::SEC_US / 10);
    let (s, t) = (tenths / 10, tenths % 10);
    format!("00:{:02}:{:02}.{t}", s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_keep_every_digit_and_tenths_round_down() {
        assert_eq!(seconds(30_000), "30 s");
        assert_eq!(seconds(1_500), "1.5 s");
        assert_eq!(seconds(250), "0.25 s");
        assert_eq!(tenths(29_870), "29.8 s");
        assert_eq!(tenths(10_000), "10.0 s");
    }
}
