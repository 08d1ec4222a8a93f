//! `coordlab experiment …`: measurements over many trials. Today one experiment,
//! `election-downtime`; this file parses its options and prints its report.

use crate::args::UsageError;
use coordlab_sim::experiments::election_downtime::{
    decomposition, ms_text, run, DowntimeConfig, DowntimeReport, START_TERM, TIMEOUT_MS_MAX, TIMEOUT_MS_MIN,
    TRIALS_MAX,
};
use serde_json::{json, Value};
use std::fmt::Write;

pub const ELECTION_DOWNTIME_HELP: &str = "\
coordlab experiment election-downtime — how long a Raft cluster has no leader after its
leader crashes (the setup of the Raft paper's election measurement, §9.3 / Figure 16)

USAGE:
    coordlab experiment election-downtime --timeout-ms MIN-MAX --trials N [--seed S]
        [--latency-ms MIN-MAX] [--durable-ms D] [--jitter-ms J] [--format text|json]

OPTIONS:
    --timeout-ms MIN-MAX  the election timeout range in ms, each bound 10..=10000, MIN <= MAX;
                          150-150 means no randomness at all
    --trials N            how many independent trials, 1..=100000
    --seed S              the experiment's seed (default 1); trial i is a pure function of
                          (S, i, the timeout range and the timing), so the same command
                          prints the same numbers
    --latency-ms MIN-MAX  one-way network delay, uniform per message (default 2-3 ms)
    --durable-ms D        one durable write, paid before a server sends what follows it
                          (default 10 ms)
    --jitter-ms J         how late a timer may fire, uniform in 0..=J (default 0.5 ms)
                          (these three take ms with up to 3 decimals, each at most 1000)
    --format FORMAT       text (default): a summary table, a histogram with cumulative
                          percentages, and every trial; json: one object with `trials_ms`
                          (one entry per trial, null if it elected nobody) and `summary`

THE MODEL (what one trial simulates, and what it leaves out):
    - Five servers running coordlab's Raft server unchanged: randomized election timers,
      RequestVote with the up-to-date log check, one vote per term, terms that only grow.
    - S1 leads term 2. S1, S2 and S3 store three log entries; S4 and S5 are missing the
      third, so S2 and S3 refuse them their votes and they can never win. When one of them
      times out first it only costs a term.
    - At time 0 S1 sends one heartbeat to all four followers at the same instant. Each
      follower restarts its election timer when the heartbeat arrives.
    - S1 then crashes at a moment drawn uniformly within its heartbeat interval, which is
      half the minimum election timeout (in whole ms). It stays down. Until the crash it
      does not act on the answers to its heartbeat: otherwise it would send S4 and S5
      their missing entry and the logs would no longer differ.
    - Time is spent in three places, each modelled separately by the simulator's kernel:
      * the network: every message takes 2-3 ms one way (uniform, drawn per message; a
        LAN hop plus the RPC stack). No message is lost.
      * the disk: a server writes to disk before it answers with anything new: a voter
        its vote before granting it, a follower new entries before acknowledging them,
        either one a newer term it just learned. One write takes 10 ms (a synchronous
        write), one per message handled however much it writes. A refusal in the same
        term, or a heartbeat with nothing new, writes nothing. A candidate sends its vote
        requests at once and writes its new term and self-vote while they travel (the
        write ends long before an answer can arrive). The server keeps handling other
        messages during a write.
      * the timers: each fires late by a uniform 0-0.5 ms, as a real timer wakes a thread the
        scheduler runs a little later. Clocks themselves run at the right rate.
      A vote request and its answer therefore take 2.5 + 10 + 2.5 = 15 ms on average: the
      paper's broadcast time (\"roughly 15 ms\"). How the 15 ms splits between wire and
      disk is our assumption, chosen so that two of the paper's stated results come out
      close: 150-155 a median of 287 ms, 150-200 a worst case of 513 ms over 1000 trials.
      Its 12-24 mean of 35 ms does not (ours is 48): a 15 ms vote round trip is longer than
      a 12 ms timeout, so a voter whose fresh timer is short stands again before the
      winner's first heartbeat arrives and deposes it (the `where the time went` line
      counts them); --durable-ms 5 (a 10 ms round trip) gives 35.5. See docs/cli.md.
      The jitter is what lets identical
      timeouts (150-150) elect at all: each round it moves the servers' timers apart by a
      little, until one runs out a full write and a hop ahead of the others.
    - The model before this one put the whole 15 ms on the wire (5-10 ms each way, no disk
      write, exact timers): --latency-ms 5-10 --durable-ms 0 --jitter-ms 0 reproduces it.
    - Downtime runs from the crash until every surviving server has accepted an
      AppendEntries from the leader of one new term, i.e. received its first heartbeat.
      `where the time went` splits it into detect (crash to the first candidate), elect
      (to the first winner) and announce (to every survivor following one leader: one
      message delay, more when the first winner was deposed).
    - A trial with no such leader 60 s (simulated) after the crash, or after a million
      simulated events, is counted as \"no leader\": it ranks after every finished trial,
      and a percentile that falls on it, the maximum and the mean are reported as unknown
      rather than guessed.

EXIT STATUS:
    0 success, 2 usage error
";

/// Most trials listed per line of the text report.
const TRIALS_PER_LINE: usize = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Text,
    Json,
}

#[derive(Debug, PartialEq, Eq)]
pub enum ExperimentCommand {
    /// Help for the experiment named, or for experiments in general.
    Help,
    ElectionDowntime {
        config: DowntimeConfig,
        format: ReportFormat,
    },
    /// `consensus-throughput --help`.
    ThroughputHelp,
    ConsensusThroughput {
        config: crate::throughput::ThroughputConfig,
        format: ReportFormat,
    },
}

const EXPERIMENTS: &str = "election-downtime, consensus-throughput";
const OPTIONS: [&str; 7] = [
    "--timeout-ms",
    "--trials",
    "--seed",
    "--format",
    "--latency-ms",
    "--durable-ms",
    "--jitter-ms",
];

/// Parses what follows `coordlab experiment`.
pub fn parse(rest: &[String]) -> Result<ExperimentCommand, UsageError> {
    let help = rest.iter().any(|a| a == "--help" || a == "-h");
    if rest.first().is_some_and(|n| n == "consensus-throughput") {
        if help {
            return Ok(ExperimentCommand::ThroughputHelp);
        }
        return crate::throughput::parse(&rest[1..]);
    }
    if help {
        return Ok(ExperimentCommand::Help);
    }
    let Some((name, rest)) = rest.split_first() else {
        return Err(UsageError(format!(
            "`experiment` needs an experiment name; available: {EXPERIMENTS}"
        )));
    };
    if name != "election-downtime" {
        return Err(UsageError(format!(
            "unknown experiment `{name}`; available: {EXPERIMENTS}"
        )));
    }
    let [timeout, trials, seed, format, latency, durable, jitter] = parse_options(rest, &OPTIONS, name)?;
    let Some(timeout) = timeout else {
        return Err(UsageError(
            "`experiment election-downtime` needs --timeout-ms MIN-MAX, e.g. --timeout-ms 150-300".into(),
        ));
    };
    let (min, max) = parse_range(&timeout)?;
    let Some(trials) = trials else {
        return Err(UsageError(
            "`experiment election-downtime` needs --trials N, e.g. --trials 1000".into(),
        ));
    };
    let trials = trials.parse::<u32>().map_err(|_| {
        UsageError(format!(
            "bad --trials `{trials}`; expected a whole number 1..={TRIALS_MAX}"
        ))
    })?;
    let seed = match seed {
        None => 1,
        Some(s) => s.parse::<u64>().map_err(|_| {
            UsageError(format!(
                "bad --seed `{s}`; expected a whole number 0..={}",
                u64::MAX
            ))
        })?,
    };
    let format = match format.as_deref() {
        None | Some("text") => ReportFormat::Text,
        Some("json") => ReportFormat::Json,
        Some(other) => {
            return Err(UsageError(format!(
                "bad --format `{other}`; choose one of text, json"
            )))
        }
    };
    let config = DowntimeConfig::new(min, max, trials, seed).map_err(UsageError)?;
    let latency_us = match latency {
        None => (config.latency_min_us, config.latency_max_us),
        Some(text) => {
            let bad = |why: &str| {
                UsageError(format!(
                    "bad --latency-ms `{text}`: {why}; expected MIN-MAX in ms, e.g. 1-2 or 0.5-1.5"
                ))
            };
            let (a, b) = text.split_once('-').ok_or_else(|| bad("no `-`"))?;
            let lo = parse_ms(a).ok_or_else(|| bad("not a number of ms"))?;
            let hi = parse_ms(b).ok_or_else(|| bad("not a number of ms"))?;
            (lo, hi)
        }
    };
    let one = |key: &str, value: Option<String>, default: u64| match value {
        None => Ok(default),
        Some(text) => parse_ms(&text).ok_or_else(|| {
            UsageError(format!(
                "bad {key} `{text}`; expected a number of ms (up to 3 decimals), e.g. 12 or 0.5"
            ))
        }),
    };
    let durable_us = one("--durable-ms", durable, config.durable_write_us)?;
    let jitter_us = one("--jitter-ms", jitter, config.timer_jitter_us)?;
    let config = config
        .with_timing(latency_us, durable_us, jitter_us)
        .map_err(UsageError)?;
    Ok(ExperimentCommand::ElectionDowntime { config, format })
}

/// Reads `--key value` and `--key=value` pairs for `experiment {name}`: one value per
/// entry of `options`, in the same order, `None` where the option is absent. Anything
/// else, a missing value, or an option given twice is a usage error.
pub(crate) fn parse_options<const N: usize>(
    rest: &[String],
    options: &[&str; N],
    name: &str,
) -> Result<[Option<String>; N], UsageError> {
    let mut values = std::array::from_fn(|_| None);
    let mut args = rest.iter();
    while let Some(arg) = args.next() {
        let (key, inline) = match arg.split_once('=') {
            Some((key, value)) if key.starts_with("--") => (key, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        let Some(slot) = options.iter().position(|o| *o == key) else {
            return Err(UsageError(format!(
                "unexpected argument `{arg}` for `experiment {name}`; its options are: {}",
                options.join(", ")
            )));
        };
        let value = match inline {
            Some(v) => v,
            None => args
                .next()
                .cloned()
                .ok_or_else(|| UsageError(format!("{key} needs a value")))?,
        };
        if values[slot].replace(value).is_some() {
            return Err(UsageError(format!("{key} is given twice")));
        }
    }
    Ok(values)
}

/// Milliseconds with up to three decimals (`12`, `0.5`, `1.25`) as whole microseconds.
pub(crate) fn parse_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || frac.len() > 3 || !digits(whole) || !digits(frac) {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let frac: u64 = format!("{frac:0<3}").parse().ok()?;
    whole.checked_mul(1_000)?.checked_add(frac)
}

/// `MIN-MAX` in whole milliseconds.
fn parse_range(text: &str) -> Result<(u64, u64), UsageError> {
    let bad = |why: String| {
        UsageError(format!(
            "bad --timeout-ms `{text}`: {why}; expected MIN-MAX in ms with {TIMEOUT_MS_MIN} <= MIN <= MAX <= {TIMEOUT_MS_MAX}, e.g. 150-300"
        ))
    };
    let (a, b) = text.split_once('-').ok_or_else(|| bad("no `-`".into()))?;
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| bad(format!("`{s}` is not a whole number")))
    };
    let (min, max) = (number(a)?, number(b)?);
    if min > max {
        return Err(bad(format!("{min} is more than {max}")));
    }
    for v in [min, max] {
        if !(TIMEOUT_MS_MIN..=TIMEOUT_MS_MAX).contains(&v) {
            return Err(bad(format!("{v} is out of range")));
        }
    }
    Ok((min, max))
}

/// Runs a parsed experiment command and returns what it prints.
pub fn execute(command: &ExperimentCommand) -> String {
    match command {
        ExperimentCommand::Help => ELECTION_DOWNTIME_HELP.to_string(),
        ExperimentCommand::ThroughputHelp => crate::throughput::HELP.to_string(),
        ExperimentCommand::ConsensusThroughput { config, format } => {
            crate::throughput::execute(config, *format)
        }
        ExperimentCommand::ElectionDowntime { config, format } => {
            let report = run(config);
            match format {
                ReportFormat::Text => text(&report),
                ReportFormat::Json => {
                    let mut s = json_report(&report).to_string();
                    s.push('\n');
                    s
                }
            }
        }
    }
}

/// Milliseconds with three decimals, from whole microseconds.
fn ms(us: u64) -> String {
    format!("{}.{:03}", us / 1_000, us % 1_000)
}

fn ms_or(us: Option<u64>, unknown: &str) -> String {
    us.map_or_else(|| unknown.to_string(), ms)
}

fn ms_json(us: Option<u64>) -> Value {
    // Whole microseconds divided by a thousand print as the same decimals everywhere.
    us.map_or(Value::Null, |us| json!(us as f64 / 1_000.0))
}

fn json_report(report: &DowntimeReport) -> Value {
    let c = &report.config;
    let s = &report.summary;
    let d = decomposition(&report.trials);
    json!({
        "experiment": "election-downtime",
        "timeout_ms": {"min": c.timeout_ms_min, "max": c.timeout_ms_max},
        "heartbeat_ms": c.heartbeat_ms(),
        "latency_ms": {"min": ms_json(Some(c.latency_min_us)), "max": ms_json(Some(c.latency_max_us))},
        "durable_write_ms": ms_json(Some(c.durable_write_us)),
        "timer_jitter_ms": ms_json(Some(c.timer_jitter_us)),
        "broadcast_time_ms": ms_json(Some(c.broadcast_time_us())),
        "servers": 5,
        "seed": c.seed,
        "trials": c.trials,
        "cap_ms": c.cap_ms,
        "no_leader": s.censored,
        "trials_ms": report.trials.iter().map(|t| ms_json(t.downtime_us)).collect::<Vec<_>>(),
        "terms_used": report.trials.iter().map(|t| t.new_term.map_or(Value::Null, |n| json!(n.0 - START_TERM.0))).collect::<Vec<_>>(),
        "where_the_time_went": {
            "trials": d.trials,
            "detect_mean_ms": ms_json(Some(d.detect_us)),
            "elect_mean_ms": ms_json(Some(d.elect_us)),
            "announce_mean_ms": ms_json(Some(d.announce_us)),
            "first_winner_deposed": d.deposed,
        },
        "summary": {
            "min": ms_json(s.min_us),
            "p10": ms_json(s.p10_us),
            "median": ms_json(s.median_us),
            "p90": ms_json(s.p90_us),
            "p99": ms_json(s.p99_us),
            "max": ms_json(s.max_us),
            "mean": ms_json(s.mean_us),
        },
    })
}

/// Upper edges of the histogram's buckets in ms: a 1–1.5–2–3–5–7 series, roughly even on a
/// log scale like the paper's figure.
fn bucket_edges_ms(cap_ms: u64) -> Vec<u64> {
    let mut edges = Vec::new();
    let mut decade = 10;
    while decade <= cap_ms {
        for step in [10, 15, 20, 30, 50, 70] {
            let edge = decade * step / 10;
            if edge <= cap_ms {
                edges.push(edge);
            }
        }
        decade *= 10;
    }
    // The last bucket ends at the cap, so every finished trial has one.
    if edges.last() != Some(&cap_ms) {
        edges.push(cap_ms);
    }
    edges
}

fn text(report: &DowntimeReport) -> String {
    let c = &report.config;
    let s = &report.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "experiment       election-downtime (5 Raft servers; see --help for the model)"
    );
    let _ = writeln!(
        out,
        "election timeout {}-{} ms · heartbeat {} ms · seed {}",
        c.timeout_ms_min,
        c.timeout_ms_max,
        c.heartbeat_ms(),
        c.seed
    );
    let _ = writeln!(
        out,
        "timing           latency {}-{} ms one way · durable write {} ms · timers up to {} ms late · broadcast time {} ms",
        ms_text(c.latency_min_us),
        ms_text(c.latency_max_us),
        ms_text(c.durable_write_us),
        ms_text(c.timer_jitter_us),
        ms_text(c.broadcast_time_us())
    );
    let _ = writeln!(
        out,
        "trials           {} ({} with no leader {} s after the crash)",
        c.trials,
        s.censored,
        c.cap_ms / 1_000
    );
    let unknown = format!("> {} s", c.cap_ms / 1_000);
    let _ = writeln!(out);
    let _ = writeln!(out, "downtime (ms)");
    for (label, value) in [
        ("min", s.min_us),
        ("p10", s.p10_us),
        ("median", s.median_us),
        ("p90", s.p90_us),
        ("p99", s.p99_us),
        ("max", s.max_us),
    ] {
        let _ = writeln!(out, "  {label:<7} {:>12}", ms_or(value, &unknown));
    }
    let mean = match s.mean_us {
        Some(m) => ms(m),
        None if s.censored == s.trials => "unknown".to_string(),
        None => "unknown (some trials hit the cap)".to_string(),
    };
    let _ = writeln!(out, "  {:<7} {mean:>12}", "mean");
    let _ = writeln!(out);
    histogram(&mut out, report);
    let _ = writeln!(out);
    terms(&mut out, report);
    let d = decomposition(&report.trials);
    let _ = writeln!(
        out,
        "where the time went (means over {} trials that elected): detect {} ms (crash to first candidate) · elect {} ms (to the first winner) · announce {} ms (to every survivor following one leader) · first winner deposed in {} trials",
        d.trials,
        ms(d.detect_us),
        ms(d.elect_us),
        ms(d.announce_us),
        d.deposed
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "every trial (ms; `-` = no leader within the cap)");
    for chunk in report.trials.chunks(TRIALS_PER_LINE) {
        let cells: Vec<String> = chunk
            .iter()
            .map(|t| format!("{:>10}", ms_or(t.downtime_us, "-")))
            .collect();
        let _ = writeln!(out, "  {:>6}: {}", chunk[0].index, cells.join(" "));
    }
    out
}

/// Groups of "terms used" for the text report: exact for the first few, then coarser.
const TERM_GROUPS: [(u64, u64); 9] = [
    (1, 1),
    (2, 2),
    (3, 3),
    (4, 4),
    (5, 9),
    (10, 19),
    (20, 49),
    (50, 99),
    (100, u64::MAX),
];

/// How many terms each finished trial went through before one produced a leader everyone
/// followed: 1 means the first election after the crash succeeded. Terms are lost to split
/// votes and to candidates (S4, S5) that cannot win.
fn terms(out: &mut String, report: &DowntimeReport) {
    let total = report.trials.len() as u64;
    let mut cells = Vec::new();
    for (low, high) in TERM_GROUPS {
        let n = report
            .trials
            .iter()
            .filter_map(|t| t.new_term)
            .filter(|t| (low..=high).contains(&(t.0 - START_TERM.0)))
            .count() as u64;
        if n == 0 {
            continue;
        }
        let label = match (low, high) {
            (l, h) if l == h => l.to_string(),
            (l, u64::MAX) => format!("{l}+"),
            (l, h) => format!("{l}-{h}"),
        };
        let permille = n * 1_000 / total;
        cells.push(format!("{label}: {}.{}%", permille / 10, permille % 10));
    }
    if cells.is_empty() {
        cells.push("no trial elected a leader".into());
    }
    let _ = writeln!(out, "terms until a leader (1 = the first election won)");
    let _ = writeln!(out, "  {}", cells.join("  "));
}

/// Counts per bucket with a bar and the cumulative share, like a CDF read off a table.
fn histogram(out: &mut String, report: &DowntimeReport) {
    const WIDTH: u64 = 40;
    let edges = bucket_edges_ms(report.config.cap_ms);
    let mut counts = vec![0u64; edges.len() + 1];
    for t in &report.trials {
        let slot = match t.downtime_us {
            // A downtime exactly on an edge belongs to the bucket that edge closes.
            Some(us) => edges.iter().position(|e| us <= e * 1_000).unwrap_or(edges.len()),
            None => edges.len(),
        };
        counts[slot] += 1;
    }
    let total = report.trials.len() as u64;
    let most = counts.iter().copied().max().unwrap_or(1).max(1);
    let first = counts.iter().position(|n| *n > 0).unwrap_or(0);
    let last = counts.iter().rposition(|n| *n > 0).unwrap_or(0);
    let _ = writeln!(out, "histogram            count  cumulative");
    let mut cumulative = 0;
    for (i, n) in counts.iter().enumerate().take(last + 1).skip(first) {
        cumulative += n;
        let label = if i == edges.len() {
            format!("no leader in {} s", report.config.cap_ms / 1_000)
        } else {
            let low = if i == 0 { 0 } else { edges[i - 1] };
            format!("{low}-{} ms", edges[i])
        };
        let bar = "#".repeat(((n * WIDTH).div_ceil(most)) as usize);
        let permille = cumulative * 1_000 / total;
        let _ = writeln!(
            out,
            "  {label:<18} {n:>6}  {:>5}.{}%  {bar}",
            permille / 10,
            permille % 10
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ranges_parse_or_explain() {
        assert_eq!(parse_range("150-300"), Ok((150, 300)));
        assert_eq!(parse_range("150-150"), Ok((150, 150)));
        assert!(parse_range("300-150").is_err());
        assert!(parse_range("0-10").is_err());
        assert!(parse_range("150").is_err());
        assert!(parse_range("a-b").is_err());
        assert!(parse_range("150-10001").is_err());
    }

    #[test]
    fn options_parse_with_defaults() {
        let cmd = parse(&args(&[
            "election-downtime",
            "--timeout-ms",
            "12-24",
            "--trials=5",
        ]))
        .unwrap();
        let ExperimentCommand::ElectionDowntime { config, format } = cmd else {
            panic!("expected the experiment")
        };
        assert_eq!((config.timeout_ms_min, config.timeout_ms_max), (12, 24));
        assert_eq!((config.trials, config.seed), (5, 1));
        assert_eq!(format, ReportFormat::Text);
        assert!(parse(&args(&["election-downtime", "--trials", "5"])).is_err());
        assert!(parse(&args(&["nope"])).is_err());
    }

    #[test]
    fn options_come_back_in_declared_order_once_each() {
        const OPTS: [&str; 2] = ["--a", "--b"];
        let [a, b] = parse_options(&args(&["--b=2", "--a", "1"]), &OPTS, "x").unwrap();
        assert_eq!((a.as_deref(), b.as_deref()), (Some("1"), Some("2")));
        assert_eq!(parse_options(&args(&[]), &OPTS, "x"), Ok([None, None]));
        let err = |list: &[&str]| parse_options(&args(list), &OPTS, "x").unwrap_err().0;
        assert_eq!(err(&["--a"]), "--a needs a value");
        assert_eq!(err(&["--a=1", "--a", "2"]), "--a is given twice");
        assert_eq!(
            err(&["--c=1"]),
            "unexpected argument `--c=1` for `experiment x`; its options are: --a, --b"
        );
    }

    #[test]
    fn milliseconds_parse_with_up_to_three_decimals() {
        assert_eq!(parse_ms("12"), Some(12_000));
        assert_eq!(parse_ms("0.5"), Some(500));
        assert_eq!(parse_ms("1.25"), Some(1_250));
        assert_eq!(parse_ms("0"), Some(0));
        for bad in ["", ".5", "1.2345", "-1", "1e3", "x"] {
            assert_eq!(parse_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn buckets_follow_the_series_up_to_the_cap() {
        let edges = bucket_edges_ms(60_000);
        assert_eq!(&edges[..8], &[10, 15, 20, 30, 50, 70, 100, 150]);
        assert!(edges.contains(&150) && edges.contains(&300) && edges.contains(&50_000));
        assert!(edges.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(edges.last(), Some(&60_000), "the last bucket closes at the cap");
    }
}
