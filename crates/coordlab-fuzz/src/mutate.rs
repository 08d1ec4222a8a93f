//! Mutation: small edits to a valid input, where parsers' corner cases live.

use crate::Choices;

/// Longest input a mutation makes. Long enough for a parser's per-item cost to show, short
/// enough that a million inputs stay quick.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;

/// Bytes that mean something to one of the grammars, or break UTF-8.
const DELIMITERS: &[u8] = b"%&=?#/+;@:.-_`~ \t\n\0\xC3\xA9\xE2\x82\xFF";

/// `input` after one to four edits: a bit flip, a delimiter written over a byte, bytes
/// inserted, a span deleted or repeated, a splice with `other`, a `token` inserted, a cut. The
/// edits work on bytes, so they can split a UTF-8 sequence; the result is made text again the
/// lossy way, as a browser's location or a shell's arguments are.
pub fn mutate(c: &mut Choices, input: &str, other: &str, tokens: &[&str]) -> String {
    let mut bytes = input.as_bytes().to_vec();
    for _ in 0..1 + c.below(4) {
        edit(c, &mut bytes, other.as_bytes(), tokens);
        bytes.truncate(MAX_INPUT_BYTES);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn edit(c: &mut Choices, bytes: &mut Vec<u8>, other: &[u8], tokens: &[&str]) {
    let at = |c: &mut Choices, len: usize| c.index(len + 1);
    match c.below(9) {
        0 if !bytes.is_empty() => {
            let i = c.index(bytes.len());
            bytes[i] ^= 1 << c.below(8);
        }
        1 if !bytes.is_empty() => {
            let i = c.index(bytes.len());
            bytes[i] = *c.pick(DELIMITERS);
        }
        2 => {
            let i = at(c, bytes.len());
            let new: Vec<u8> = (0..1 + c.below(8)).map(|_| c.byte()).collect();
            bytes.splice(i..i, new);
        }
        3 if !bytes.is_empty() => {
            let start = c.index(bytes.len());
            let end = start + c.index(bytes.len() - start) + 1;
            bytes.drain(start..end);
        }
        4 if !bytes.is_empty() => {
            // Repeat a span, now and then many times: long inputs and many items.
            let start = c.index(bytes.len());
            let end = start + c.index((bytes.len() - start).min(64)) + 1;
            let times = if c.chance(1, 50) {
                1 + c.index(2_000)
            } else {
                1 + c.index(3)
            };
            let span = bytes[start..end].repeat(times);
            let i = at(c, bytes.len());
            bytes.splice(i..i, span);
        }
        5 => {
            let keep = at(c, bytes.len());
            let from = at(c, other.len());
            bytes.truncate(keep);
            bytes.extend_from_slice(&other[from..]);
        }
        6 if !tokens.is_empty() => {
            let i = at(c, bytes.len());
            bytes.splice(i..i, c.pick(tokens).bytes());
        }
        7 => {
            let keep = at(c, bytes.len());
            bytes.truncate(keep);
        }
        _ => {
            let i = at(c, bytes.len());
            bytes.insert(i, *c.pick(DELIMITERS));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_change_inputs_and_stay_within_the_length_bound() {
        let mut changed = 0;
        for i in 0..2_000 {
            let mut c = Choices::for_input(3, i);
            let out = mutate(&mut c, "3@crash:1;9@restart:1", "seed=7&step=2", &["pause"]);
            // Lossy decoding turns each stray byte into a three-byte U+FFFD.
            assert!(out.len() <= 3 * MAX_INPUT_BYTES, "{}", out.len());
            changed += u32::from(out != "3@crash:1;9@restart:1");
        }
        assert!(
            changed > 1_900,
            "only {changed} of 2000 mutations changed the input"
        );
    }
}
