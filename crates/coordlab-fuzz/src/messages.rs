//! What a good rejection message looks like: it names what was wrong by quoting it.

/// Most quote marks of a kind whose every pairing [`quoted`] tries (a quote of text that
/// itself holds quote marks pairs them differently); past it, only neighbours pair.
const MARKS_PAIRED: usize = 16;

/// The spans `message` may quote, between backticks or between “ and ”. A quoted piece of
/// input can hold quote marks itself, so every pair of marks counts, not only neighbours.
pub fn quoted(message: &str) -> Vec<&str> {
    let at = |mark: char| -> Vec<usize> { message.match_indices(mark).map(|(i, _)| i).collect() };
    let ticks = at('`');
    let (opens, closes) = (at('“'), at('”'));
    let mut spans = Vec::new();
    let mut pair = |open_marks: &[usize], open_len: usize, close_marks: &[usize]| {
        let every = open_marks.len() <= MARKS_PAIRED && close_marks.len() <= MARKS_PAIRED;
        for &open in open_marks {
            let start = open + open_len;
            let later = close_marks.iter().filter(|&&close| close >= start);
            let count = if every { usize::MAX } else { 1 };
            spans.extend(later.take(count).map(|&close| &message[start..close]));
        }
    };
    pair(&ticks, 1, &ticks);
    pair(&opens, '“'.len_utf8(), &closes);
    spans
}

/// Whether `message` quotes a non-empty piece of one of `typed` (the input as typed or
/// decoded, or the parts a parser names, such as one action of a script): the reader can see
/// which part of what they typed was wrong.
pub fn quotes_input(message: &str, typed: &[&str]) -> bool {
    let whole = |t: &&str| {
        !t.is_empty() && (message.contains(&format!("`{t}`")) || message.contains(&format!("“{t}”")))
    };
    quoted(message)
        .iter()
        .any(|span| !span.is_empty() && typed.iter().any(|t| t.contains(span)))
        || typed.iter().any(whole)
}

/// `Ok` if `message` is a useful rejection of `typed`: not empty, and quoting a non-empty
/// piece of it (unless nothing but blanks was typed). Otherwise what is missing, for a [`crate::Verdict::Broken`].
pub fn check_names_input(message: &str, typed: &[&str]) -> Result<(), String> {
    if message.trim().is_empty() {
        return Err("rejected with an empty message".to_string());
    }
    // Nothing typed, nothing to quote: saying that it is empty is enough.
    let all_blank = typed.iter().all(|t| t.trim().is_empty());
    if !all_blank && !quotes_input(message, typed) {
        return Err(format!(
            "the message does not quote the part of the input that was wrong: {message:?}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_spans_are_found_in_either_style() {
        let spans = quoted("fault `x:1`: “y” and `z`");
        for span in ["x:1", "z", "y", "x:1`: “y” and "] {
            assert!(spans.contains(&span), "{span} in {spans:?}");
        }
        assert!(quotes_input("action `a`b`: bad", &["a`b"]));
        assert!(quotes_input(
            "“”..=” is not a setting",
            &["?%E2%80%9D..=", "?”..="]
        ));
        let ticks = "`".repeat(40);
        assert!(quotes_input(&format!("action `{ticks}`: bad"), &[&ticks]));
        assert!(quotes_input("unknown fault `boom`", &["3@boom:1"]));
        assert!(!quotes_input("unknown fault ``", &["3@"]));
        assert!(!quotes_input("the script is wrong", &["3@boom"]));
        assert!(check_names_input("", &["x"]).is_err());
    }
}
