//! How wide a text is drawn, estimated without a browser: the layout needs it to size cards and
//! to keep labels off them. The figures are DejaVu Sans's advances (the widest of the common UI
//! fonts, and the one Linux browsers fall back to), so on any other font the text only comes
//! out narrower than planned.

/// The advance of `c` in em, bold.
fn advance_em(c: char) -> f64 {
    match c {
        ' ' | '.' | ',' | ':' | ';' | '·' | '\'' | '|' | '!' | 'i' | 'j' | 'l' | 'I' | 'J' => 0.4,
        'f' | 't' | 'r' | '(' | ')' | '-' | '/' | '[' | ']' => 0.5,
        'm' | 'w' | 'M' | 'W' | '%' | '…' => 1.05,
        '★' | '✓' | '✕' | '○' | '→' | '←' | '+' | '=' | '−' | '#' | '◆' | '▶' | '⏸' => {
            0.92
        }
        'A'..='Z' => 0.86,
        _ => 0.73,
    }
}

/// The width of `text` drawn at `size` px, `bold` or regular.
#[inline(never)]
pub fn width(text: &str, size: f64, bold: bool) -> f64 {
    let em: f64 = text.chars().map(advance_em).sum();
    em * size * if bold { 1.0 } else { 0.92 }
}

/// `text` cut with "…" to fit `room` px at `size` (whole, if it fits).
#[inline(never)]
pub fn fit(text: &str, size: f64, bold: bool, room: f64) -> String {
    if width(text, size, bold) <= room {
        return text.to_string();
    }
    let ellipsis = advance_em('…') * size;
    let mut used = 0.0;
    let mut out = String::new();
    for c in text.chars() {
        let w = advance_em(c) * size * if bold { 1.0 } else { 0.92 };
        if used + w + ellipsis > room {
            break;
        }
        used += w;
        out.push(c);
    }
    let out = out.trim_end().to_string();
    format!("{out}…")
}

/// A font size as written in markup: whole pixels (the layout rounds every size it picks).
pub fn size_attr(size: f64) -> String {
    crate::markup::n(crate::markup::px(size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_too_long_is_cut_to_its_room_with_an_ellipsis() {
        let t = "checking the job's progress";
        let room = width("checking the", 12.0, false);
        let cut = fit(t, 12.0, false, room);
        assert!(cut.ends_with('…'), "{cut}");
        assert!(width(&cut, 12.0, false) <= room);
        assert_eq!(fit("done", 12.0, false, 100.0), "done");
    }

    #[test]
    fn bold_is_wider_than_regular_and_size_scales_width() {
        assert!(width("worker-A", 18.0, true) > width("worker-A", 18.0, false));
        let (a, b) = (width("leader", 12.0, true), width("leader", 24.0, true));
        assert!((b - 2.0 * a).abs() < 1e-9);
    }
}
