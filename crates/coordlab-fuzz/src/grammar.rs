//! Pieces of coordlab's input grammars that several harnesses share: numbers at the edges,
//! action scripts, percent-encoding and noise.

use crate::Choices;

/// Text that is almost a number, or a number at an edge of the types parsers read into.
const EDGE_NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "-0",
    "+0",
    "+5",
    "05",
    "007",
    "4294967295",           // u32::MAX
    "4294967296",           // u32::MAX + 1
    "18446744073709551615", // u64::MAX
    "18446744073709551616", // u64::MAX + 1
    "9223372036854775807",  // i64::MAX
    "9223372036854775808",  // i64::MAX + 1
    "-9223372036854775808", // i64::MIN
    "-9223372036854775809", // i64::MIN - 1
    "340282366920938463463374607431768211456",
    "1e3",
    "0x10",
    "1_000",
    "1.5",
    " 5",
    "5 ",
    "",
    "-",
    "+",
    "٣",
    "５",
    "NaN",
];

/// A number as a user might type it: small, at a type's edge, almost a number, huge, or any.
pub fn number(c: &mut Choices) -> String {
    match c.below(6) {
        0 | 1 => c.below(40).to_string(),
        2 => c.pick(EDGE_NUMBERS).to_string(),
        3 => format!("-{}", c.below(1000)),
        4 => "9".repeat(1 + c.index(300)),
        _ => c.u64().to_string(),
    }
}

/// A number near `bound` (one off either side, or on it), to probe a documented limit.
pub fn near(c: &mut Choices, bound: i128) -> String {
    (bound + i128::from(c.below(3)) - 1).to_string()
}

/// The verbs of the action-script grammar (`crates/coordlab-sim/src/kernel/faults.rs`), with
/// how many `:`-separated arguments each takes.
pub const FAULT_VERBS: &[(&str, u32)] = &[
    ("crash", 1),
    ("restart", 1),
    ("pause", 2),
    ("partition", 1),
    ("cut", 2),
    ("heal", 0),
    ("hold", 2),
    ("release", 2),
    ("drop", 1),
    ("hold-msg", 1),
    ("clock-jump", 2),
    ("clock-drift", 2),
    ("slow", 2),
    ("input", 2),
];

/// Words a node may take as an `input:` (and a few it may not).
const INPUT_WORDS: &[&str] = &["timeout", "write", "force-2", "", "a b", "<script>", "é", "x-"];

/// One fault in its compact form, e.g. `pause:1:400`: mostly well formed, sometimes with the
/// wrong number of arguments or a value past its bound.
pub fn fault(c: &mut Choices) -> String {
    let (verb, arity) = *c.pick(FAULT_VERBS);
    let arity = if c.chance(1, 12) { c.below(4) } else { arity };
    let mut out = verb.to_string();
    for position in 0..arity {
        out.push(':');
        out.push_str(&fault_argument(c, verb, position));
    }
    out
}

fn fault_argument(c: &mut Choices, verb: &str, position: u32) -> String {
    if c.chance(1, 10) {
        return number(c);
    }
    match (verb, position) {
        ("partition", _) => {
            let nodes: Vec<String> = (0..1 + c.below(5)).map(|_| c.below(8).to_string()).collect();
            nodes.join("+")
        }
        ("pause" | "slow", 1) => match c.below(3) {
            0 => near(c, 600_000),
            1 => near(c, 1),
            _ => c.below(600_000).to_string(),
        },
        ("clock-jump", 1) => match c.below(3) {
            0 => near(c, 600_000),
            1 => near(c, -600_000),
            _ => (i64::from(c.below(1_200_000)) - 600_000).to_string(),
        },
        ("clock-drift", 1) => match c.below(3) {
            0 => near(c, 500_000),
            1 => near(c, -500_000),
            _ => (i64::from(c.below(1_000_000)) - 500_000).to_string(),
        },
        ("input", 1) => {
            if c.chance(1, 8) {
                "x".repeat(20 + c.index(10))
            } else {
                c.pick(INPUT_WORDS).to_string()
            }
        }
        ("drop" | "hold-msg", _) => c.below(500).to_string(),
        _ => c.below(8).to_string(),
    }
}

/// A `;`-separated script of `STEP@FAULT` actions.
pub fn script(c: &mut Choices) -> String {
    let count = match c.below(20) {
        0 => 0,
        1 if c.chance(1, 5) => 990 + c.below(20),
        _ => 1 + c.below(5),
    };
    let mut actions = Vec::new();
    for _ in 0..count {
        let step = if c.chance(1, 10) {
            number(c)
        } else {
            c.below(200).to_string()
        };
        actions.push(format!("{step}@{}", fault(c)));
    }
    let mut out = actions.join(";");
    if c.chance(1, 10) {
        out.push(';');
    }
    out
}

/// Percent-encodes every byte of `text` (a link a program wrote over-carefully).
pub fn percent_encode_all(text: &str) -> String {
    text.bytes().map(|b| format!("%{b:02X}")).collect()
}

/// Text no grammar expects: delimiters, escapes, controls, non-ASCII, or a long run.
pub fn noise(c: &mut Choices) -> String {
    const PIECES: &[&str] = &[
        "", " ", "%", "%2", "%zz", "%00", "%FF", "%E2%82", "&", "=", "?", "#", "/", "+", ";", "@", ":", "`",
        "“", "\u{0}", "\n", "é", "₹", "👍", "\u{202e}", "\u{FFFD}", "..", "..=", "--", "-",
    ];
    match c.below(4) {
        0 => c.pick(PIECES).to_string(),
        1 => (0..1 + c.below(6)).map(|_| *c.pick(PIECES)).collect(),
        2 => c.pick(PIECES).repeat(1 + c.index(200)),
        _ => {
            let bytes: Vec<u8> = (0..c.below(12)).map(|_| c.byte()).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}
