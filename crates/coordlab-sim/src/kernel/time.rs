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

/// Formats a time for people, as [`format_instant`] does ("52.125 ms", "41 s"): the name
/// the renderers and the command line's diagrams call it by.
pub fn format_time(time_us: u64) -> String {
    format_instant(time_us)
}

/// A duration as people write it: whole milliseconds below a second ("0 ms", "250 ms"),
/// seconds with at most one decimal below a hundred ("1.2 s", "30 s"), whole seconds above
/// ("145 s"). Rounded down, so a countdown never shows more than is left.
pub fn format_duration(us: u64) -> String {
    if us < SEC_US {
        format!("{} ms", us / MS_US)
    } else if us < 100 * SEC_US {
        let tenths = us / (SEC_US / 10);
        if tenths.is_multiple_of(10) {
            format!("{} s", tenths / 10)
        } else {
            format!("{}.{} s", tenths / 10, tenths % 10)
        }
    } else {
        format!("{} s", us / SEC_US)
    }
}

/// A signed duration as people write it, with its sign: "+20 s", "−1.5 s", "0 ms".
pub fn format_signed_duration(delta_us: i64) -> String {
    let size = format_duration(delta_us.unsigned_abs());
    match delta_us.signum() {
        1 => format!("+{size}"),
        -1 => format!("−{size}"),
        _ => size,
    }
}

/// An instant on the run's clock as people write it, to the millisecond (what a debugger
/// needs to tell two events apart): "0 ms", "52.125 ms", "250 ms", "1.25 s", "20 s",
/// "12.345 s". Trailing zeros are dropped; seconds from one second on. The UI puts "t = " in
/// front where it names the moment.
pub fn format_instant(us: u64) -> String {
    let (whole, mut fraction, unit) = if us < SEC_US {
        (us / MS_US, us % MS_US, "ms")
    } else {
        (us / SEC_US, (us % SEC_US) / MS_US, "s")
    };
    // Thousandths, without their trailing zeros.
    let mut digits = 3;
    while digits > 0 && fraction.is_multiple_of(10) {
        fraction /= 10;
        digits -= 1;
    }
    if digits == 0 {
        format!("{whole} {unit}")
    } else {
        format!("{whole}.{fraction:0digits$} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_people_write_them() {
        assert_eq!(format_duration(0), "0 ms");
        assert_eq!(format_duration(250_400), "250 ms");
        assert_eq!(format_duration(1_000_000), "1 s");
        assert_eq!(format_duration(1_250_000), "1.2 s");
        assert_eq!(format_duration(29_990_000), "29.9 s");
        assert_eq!(format_duration(145_600_000), "145 s");
        assert_eq!(format_signed_duration(20_000_000), "+20 s");
        assert_eq!(format_signed_duration(-1_500_000), "−1.5 s");
        assert_eq!(format_signed_duration(0), "0 ms");
    }

    #[test]
    fn instants_print_as_people_write_them_to_the_millisecond() {
        assert_eq!(format_instant(0), "0 ms");
        assert_eq!(format_instant(52_125), "52.125 ms");
        assert_eq!(format_instant(52_500), "52.5 ms");
        assert_eq!(format_instant(250_000), "250 ms");
        assert_eq!(format_instant(999_999), "999.999 ms");
        assert_eq!(format_instant(1_000_000), "1 s");
        assert_eq!(format_instant(1_250_400), "1.25 s");
        assert_eq!(format_instant(20_000_000), "20 s");
        assert_eq!(format_instant(12_345_678), "12.345 s");
    }

    #[test]
    fn formats_milliseconds_with_three_decimals() {
        assert_eq!(format_ms(0), "0.000ms");
        assert_eq!(format_ms(52_125), "52.125ms");
        assert_eq!(format_time(9_999_999), "9.999 s");
        assert_eq!(format_time(41_000_500), "41 s");
    }
}
