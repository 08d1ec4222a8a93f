//! Simulated time: integer microseconds since the start of the run.

/// One millisecond in simulated microseconds.
pub const MS_US: u64 = 1_000;
/// One second in simulated microseconds.
pub const SEC_US: u64 = 1_000_000;

/// Formats a time in microseconds as milliseconds with three decimals, e.g. `52.125ms`.
/// Integer arithmetic only, so the text is identical on every target.
pub fn format_ms(time_us: u64) -> String {
    format!("{}.{:03}ms", time_us / MS_US, time_us % MS_US)
}

/// Formats a time for people: milliseconds below ten seconds, seconds above, e.g.
/// `52.125ms` or `41.000 s`.
pub fn format_time(time_us: u64) -> String {
    if time_us < 10 * SEC_US {
        format_ms(time_us)
    } else {
        format!("{}.{:03} s", time_us / SEC_US, (time_us % SEC_US) / MS_US)
    }
}

/// Formats a signed duration in microseconds as milliseconds.
pub fn format_signed_ms(delta_us: i64) -> String {
    let sign = if delta_us < 0 { "-" } else { "" };
    format!("{sign}{}", format_ms(delta_us.unsigned_abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_milliseconds_with_three_decimals() {
        assert_eq!(format_ms(0), "0.000ms");
        assert_eq!(format_ms(52_125), "52.125ms");
        assert_eq!(format_signed_ms(-1_500), "-1.500ms");
        assert_eq!(format_time(9_999_999), "9999.999ms");
        assert_eq!(format_time(41_000_500), "41.000 s");
    }
}
