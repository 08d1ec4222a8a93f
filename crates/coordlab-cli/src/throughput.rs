//! `coordlab experiment consensus-throughput`: its options and its two tables.

use crate::args::UsageError;
use crate::experiment::{parse_options, ExperimentCommand, ReportFormat};
pub use coordlab_sim::experiments::consensus_throughput::ThroughputConfig;
use coordlab_sim::experiments::consensus_throughput::{
    run, Point, ThroughputReport, CLIENTS_PER_GROUP, DEFAULT_DURATION_MS, DURABLE_WRITE_US, DURATION_MS_MAX,
    DURATION_MS_MIN, ENTRY_CPU_US, LATENCY_MAX_US, LATENCY_MIN_US, MACHINES, MESSAGE_CPU_US, WARMUP_MS,
};
use serde_json::{json, Value};
use std::fmt::Write;

pub const HELP: &str = "\
coordlab experiment consensus-throughput — committed writes per second and commit latency
of the simulator's Raft server, against cluster size and against the number of Raft groups
(consensus is for metadata, not volume)

USAGE:
    coordlab experiment consensus-throughput [--seed S] [--duration-ms D] [--format text|json]

OPTIONS:
    --seed S          the seed (default 1); the same command prints the same numbers
    --duration-ms D   the measurement window in simulated ms, 20..=5000 (default 400),
                      after 50 ms of warm-up
    --format FORMAT   text (default): two tables; json: one object with both

THE MODEL:
    - Table 1: one Raft group of 3, 5 and 7 servers, one per machine.
      Table 2: 1, 2, 4 and 8 groups of 3 servers on 8 machines; group g's leader sits on
      machine g*8/groups and its followers on the next two, so with 8 groups every
      machine leads one group and follows two.
    - Each leader is already elected, and stays: no crash, no election.
    - 64 clients per group each keep one write outstanding (a closed loop): a write is
      answered when its entry is committed on a majority and applied, and the client sends
      the next one at once.
    - CPU: each machine handles one message or timer at a time, first come first served.
      Handling costs 50 us for the message taken in, 50 us for each message sent, and
      10 us for each log entry an AppendEntries carries in or out. Per write a leader takes
      in a request, sends a reply and copies the entry to every follower; per batch it
      sends and hears back one AppendEntries per follower. A follower does a fraction of
      that, so the leader's CPU limits throughput, and a bigger group is a busier leader.
    - Flow control: at most one AppendEntries in flight per follower; the answer brings
      the next one, with every entry appended meanwhile (at most 16).
    - Network: 0.2-0.4 ms one way, drawn per message. Disk: a server that persists sends
      0.5 ms later; the disk works beside the CPU and does not limit throughput.
    - writes/s counts answers during the window; latency runs from the client's send to
      its answer (median and p99). `busiest CPU` is the busiest machine's share of the
      window spent handling messages, `msgs/write` the messages it handled per write.

EXIT STATUS:
    0 success, 2 usage error
";

const OPTIONS: [&str; 3] = ["--seed", "--duration-ms", "--format"];

/// Parses the options after `coordlab experiment consensus-throughput`.
pub fn parse(rest: &[String]) -> Result<ExperimentCommand, UsageError> {
    let [seed, duration, format] = parse_options(rest, &OPTIONS, "consensus-throughput")?;
    let seed = match seed {
        None => 1,
        Some(s) => s.parse::<u64>().map_err(|_| {
            UsageError(format!(
                "bad --seed `{s}`; expected a whole number 0..={}",
                u64::MAX
            ))
        })?,
    };
    let duration_ms = match duration {
        None => DEFAULT_DURATION_MS,
        Some(d) => d.parse::<u64>().map_err(|_| {
            UsageError(format!(
                "bad --duration-ms `{d}`; expected a whole number {DURATION_MS_MIN}..={DURATION_MS_MAX}"
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
    let config = ThroughputConfig::new(seed, duration_ms).map_err(UsageError)?;
    Ok(ExperimentCommand::ConsensusThroughput { config, format })
}

/// Runs the experiment and returns what it prints.
pub fn execute(config: &ThroughputConfig, format: ReportFormat) -> String {
    let report = run(config);
    match format {
        ReportFormat::Text => text(&report),
        ReportFormat::Json => format!("{}\n", json_report(&report)),
    }
}

fn ms(us: u64) -> String {
    format!("{}.{:03}", us / 1_000, us % 1_000)
}

fn point_json(p: &Point) -> Value {
    json!({
        "machines": p.layout.machines,
        "groups": p.layout.groups,
        "servers_per_group": p.layout.replicas,
        "writes": p.writes,
        "writes_per_s": p.writes_per_s,
        "latency_ms": {"median": p.median_us as f64 / 1_000.0, "p99": p.p99_us as f64 / 1_000.0},
        "busiest_cpu_percent": p.busiest_cpu_permille as f64 / 10.0,
        "busiest_messages_per_write": p.messages_per_write_centi as f64 / 100.0,
    })
}

fn json_report(report: &ThroughputReport) -> Value {
    json!({
        "experiment": "consensus-throughput",
        "seed": report.config.seed,
        "duration_ms": report.config.duration_ms,
        "warmup_ms": WARMUP_MS,
        "message_cpu_us": MESSAGE_CPU_US,
        "entry_cpu_us": ENTRY_CPU_US,
        "latency_ms": {"min": LATENCY_MIN_US as f64 / 1_000.0, "max": LATENCY_MAX_US as f64 / 1_000.0},
        "durable_write_ms": DURABLE_WRITE_US as f64 / 1_000.0,
        "clients_per_group": CLIENTS_PER_GROUP,
        "by_cluster_size": report.by_size.iter().map(point_json).collect::<Vec<_>>(),
        "by_groups": report.by_groups.iter().map(point_json).collect::<Vec<_>>(),
    })
}

fn row(out: &mut String, first: String, p: &Point) {
    let _ = writeln!(
        out,
        "  {first:<22} {:>9} {:>10} {:>10} {:>9}.{}% {:>7}.{:02}",
        p.writes_per_s,
        ms(p.median_us),
        ms(p.p99_us),
        p.busiest_cpu_permille / 10,
        p.busiest_cpu_permille % 10,
        p.messages_per_write_centi / 100,
        p.messages_per_write_centi % 100,
    );
}

fn header(out: &mut String, first: &str) {
    let _ = writeln!(
        out,
        "  {first:<22} {:>9} {:>10} {:>10} {:>11} {:>10}",
        "writes/s", "median ms", "p99 ms", "busiest CPU", "msgs/write"
    );
}

fn text(report: &ThroughputReport) -> String {
    let c = &report.config;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "experiment  consensus-throughput (Raft; see --help for the model)"
    );
    let _ = writeln!(
        out,
        "model       {MESSAGE_CPU_US} us CPU per message in or out, {ENTRY_CPU_US} us per entry · network {}-{} ms · disk write {} ms · {CLIENTS_PER_GROUP} clients per group",
        ms(LATENCY_MIN_US),
        ms(LATENCY_MAX_US),
        ms(DURABLE_WRITE_US)
    );
    let _ = writeln!(
        out,
        "window      {} ms after {WARMUP_MS} ms warm-up · seed {}",
        c.duration_ms, c.seed
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "one group: every write is a majority round trip through one leader"
    );
    header(&mut out, "servers");
    for p in &report.by_size {
        row(&mut out, format!("{}", p.layout.replicas), p);
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "groups of 3 on {MACHINES} machines: independent leaders share the work"
    );
    header(&mut out, "groups");
    for p in &report.by_groups {
        row(&mut out, format!("{}", p.layout.groups), p);
    }
    out
}
