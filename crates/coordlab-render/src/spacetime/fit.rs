//! The diagram fitted to a box: how wide text will be, where a title wraps, which stretch of
//! the run a box shows, and where beat markers go so none covers another. Pure integer
//! functions of their arguments, so the browser, the CLI and the tests agree.

/// How wide `text` is drawn at `size` px, estimated from the widest font the diagram's font
/// list meets (DejaVu Sans Bold, where `system-ui` is a Linux default): text laid out by it
/// fits with any of them. In hundredths of an em per character.
pub fn text_px(text: &str, size: i64) -> i64 {
    let hundredths: i64 = text
        .chars()
        .map(|c| match c {
            ' ' => 35,
            'i' | 'j' | 'l' | 'I' | 'J' | '\'' | '|' | '.' | ',' | ':' | ';' | '!' => 40,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' | '\\' | '"' => 50,
            'm' | 'w' => 104,
            'M' | 'W' | '%' | '@' | '…' => 110,
            'A'..='Z' | '#' | '&' | '+' | '<' | '=' | '>' | '~' => 86,
            c if c.is_ascii() => 72,
            _ => 100,
        })
        .sum();
    (hundredths * size + 99) / 100
}

/// `text` cut to what fits in `width` px at `size`, with an ellipsis when cut.
pub fn cut(text: &str, size: i64, width: i64) -> String {
    if text_px(text, size) <= width {
        return text.to_string();
    }
    let room = width - text_px("…", size);
    let mut out = String::new();
    for c in text.chars() {
        out.push(c);
        if text_px(&out, size) > room {
            out.pop();
            break;
        }
    }
    out.push('…');
    out
}

/// `text` in lines no wider than `width` px at `size`, broken between words (a word wider
/// than a whole line has a line of its own). Nothing is left out: the lines joined with
/// spaces give the text back.
pub fn wrap(text: &str, size: i64, width: i64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if text_px(line, size) + text_px(word, size) + text_px(" ", size) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Where a box `plot_w` px wide starts on the axis, to show the step at `cursor` (an axis
/// position) and the current beat at `anchor` (the first step's position before any beat).
///
/// The box turns like pages: a beat is drawn a little past halfway, with what led up to it
/// before; steps after it walk right across a still picture until a tenth from the right edge,
/// then the next page puts the cursor a little past halfway again. A room watching sees the
/// picture move once a page, not at every step, and always sees what led to the present.
pub fn window_start(anchor: i64, cursor: i64, plot_w: i64) -> i64 {
    let context = plot_w * CONTEXT_PERCENT / 100;
    let ahead = plot_w * AHEAD_PERCENT / 100;
    let page = plot_w - ahead - context;
    if page <= 0 {
        return cursor - plot_w / 2;
    }
    // Nothing comes before the first step: no page starts further left than a small lead.
    let first = (anchor - context).max(-LEAD_PX.min(context));
    let first_end = first + plot_w - ahead;
    if cursor <= first_end {
        first
    } else {
        first + (cursor - first_end + page - 1) / page * page
    }
}

/// Room left of the first step, so its mark is not on the box's edge.
const LEAD_PX: i64 = 24;
/// Where a page puts the beat (or the cursor, after a turn), in hundredths of the box: what
/// led up to it is left of it.
const CONTEXT_PERCENT: i64 = 55;
/// Room kept right of the cursor: the cursor's label and messages still on their way.
const AHEAD_PERCENT: i64 = 10;

/// Where each beat's marker goes on its row, given the beats' axis positions in step order:
/// the latest at its own place (kept between `left` and `right`), each earlier one at its
/// own place or moved left just clear of the one after it (`pitch` apart), and left out
/// (`None`) where that would put it left of `left`. The latest beat is the one being told:
/// it is never left out.
pub fn place_markers(xs: &[i64], pitch: i64, left: i64, right: i64) -> Vec<Option<i64>> {
    let mut out = vec![None; xs.len()];
    let mut limit = right;
    for (i, x) in xs.iter().enumerate().rev() {
        let x = if i + 1 == xs.len() { (*x).max(left) } else { *x };
        let at = x.min(limit);
        if at < left {
            break;
        }
        out[i] = Some(at);
        limit = at - pitch;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wider_letters_and_larger_text_take_more_room() {
        assert!(text_px("mmm", 18) > text_px("iii", 18));
        assert_eq!(text_px("", 18), 0);
        assert_eq!(text_px("abc", 36), 2 * text_px("abc", 18));
        // A lane name at 18 px: about ten pixels a letter.
        let w = text_px("lease-store", 18);
        assert!((100..=140).contains(&w), "{w}");
    }

    #[test]
    fn a_title_wraps_between_words_and_loses_nothing() {
        let title = "A's write lands: step 2 is debited twice";
        for width in [120, 200, 300, 460, 2_000] {
            let lines = wrap(title, 18, width);
            assert_eq!(lines.join(" "), title, "at {width} px");
            for line in &lines {
                assert!(text_px(line, 18) <= width, "{line:?} is wider than {width}");
            }
        }
        assert_eq!(wrap(title, 18, 2_000).len(), 1);
        assert!(wrap(title, 18, 300).len() >= 2);
    }

    #[test]
    fn a_word_wider_than_a_line_has_a_line_of_its_own() {
        let lines = wrap("call lockAndGetFence() now", 18, 60);
        assert_eq!(lines, ["call", "lockAndGetFence()", "now"]);
        assert!(wrap("", 18, 100).is_empty());
    }

    #[test]
    fn a_cut_label_ends_in_an_ellipsis_and_fits() {
        assert_eq!(cut("paused 36 s", 14, 500), "paused 36 s");
        let short = cut("partitioned from the majority", 14, 90);
        assert!(short.ends_with('…'), "{short}");
        assert!(text_px(&short, 14) <= 90);
    }

    #[test]
    fn the_window_holds_still_within_a_page_and_turns_by_pages() {
        let w = 400;
        // A beat at 1000: drawn 55% of the way in, with what led up to it before.
        assert_eq!(window_start(1_000, 1_000, w), 780);
        // Steps after it walk across a still picture…
        for cursor in [1_000, 1_100, 1_140] {
            assert_eq!(window_start(1_000, cursor, w), 780, "at {cursor}");
        }
        // …until a tenth from the right edge; then the picture turns a page, putting the
        // cursor just past 55% of the way in.
        let turned = window_start(1_000, 1_141, w);
        assert_eq!(turned, 780 + 140);
        assert_eq!(1_141 - turned, 221);
        // Every cursor is inside the window, on any page, with context before it.
        for cursor in (1_000..5_000).step_by(37) {
            let start = window_start(1_000, cursor, w);
            assert!(cursor - start >= 220 && cursor - start <= 360, "{cursor}");
        }
    }

    #[test]
    fn the_first_page_starts_at_the_first_step() {
        assert_eq!(window_start(0, 0, 400), -24);
        assert_eq!(window_start(0, 300, 400), -24);
        // A beat close to the start: no room wasted before the first step.
        assert_eq!(window_start(150, 160, 400), -24);
    }

    #[test]
    fn markers_keep_their_places_when_apart_and_move_left_when_close() {
        assert_eq!(
            place_markers(&[100, 200, 300], 30, 0, 1_000),
            vec![Some(100), Some(200), Some(300)]
        );
        // Three beats at nearly one place: the latest stays, the others step left.
        assert_eq!(
            place_markers(&[300, 305, 310], 30, 0, 1_000),
            vec![Some(250), Some(280), Some(310)]
        );
        // No room left of the box's edge: the earliest is left out, never the latest.
        assert_eq!(
            place_markers(&[10, 20, 30], 30, 0, 1_000),
            vec![None, Some(0), Some(30)]
        );
        // Never further right than allowed; the latest never left out, but kept right of
        // `left` (a title beside the markers).
        assert_eq!(place_markers(&[900], 30, 0, 800), vec![Some(800)]);
        assert_eq!(place_markers(&[100, 200], 30, 300, 800), vec![None, Some(300)]);
        // Placed markers are always at least a pitch apart.
        let xs: Vec<i64> = (0..40).map(|i| i * 7).collect();
        let placed: Vec<i64> = place_markers(&xs, 30, 0, 1_000).into_iter().flatten().collect();
        assert!(placed.windows(2).all(|p| p[1] - p[0] >= 30));
    }
}
