//! `coordlab experiment consensus-throughput`: its options and its two tables.

use crate::args::UsageError;
use crate::experiment::{parse_options, ExperimentCommand, ReportFormat};
pub use coordlab_sim::experiments::consensus_throughput::ThroughputConfig;
use coordlab_sim::experiments::consensus_throughput::{
    run, Point, ThroughputReport, DEFAULT_DURATION_MS, DURABLE_WRITE_US, DURATION_MS_MAX, DURATION_MS_MIN,
    ETCD_PUBLISHED, ETCD_SOURCE, ETCD_SOURCE_URL, LATENCY_MAX_US, LATENCY_MIN_US, MACHINES, WARMUP_MS,
};
use serde_json::{json, Value};
use std::fmt::Write;

pub const HELP: &str = "\
coordlab experiment consensus-throughput — committed writes per second and commit latency
of the simulator's Raft server, against cluster size and against the number of Raft groups
(consensus is for metadata, not volume)

USAGE:
    coordlab experiment consensus-throughput [--seed S] [--duration-ms D] [--clients N]
        [--message-cpu-us U] [--entry-cpu-us U] [--batch B] [--servers N] [--groups G]
        [--format text|json]

OPTIONS:
    --seed S             the seed (default 1); the same command prints the same numbers
    --duration-ms D      the measurement window in simulated ms, 20..=5000 (default 400),
                         after 50 ms of warm-up
    --clients N          clients per group, 1..=1000 (default 64)
    --message-cpu-us U   CPU per message in or out, 1..=10000 us (default 50; illustrative)
    --entry-cpu-us U     CPU per entry copied, 0..=10000 us (default 10; illustrative)
    --batch B            most entries per AppendEntries, 1..=16 (default 16, the server's limit)
    --servers N          servers per group of the third table, 1..=9 (default 3)
    --groups G           groups of the third table, 1..=16 (default 1), on max(N, G) machines
    --format FORMAT      text (default): three tables; json: one object with all

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
    - The CPU costs are illustrative assumptions, not measurements of a real server; the
      shape (bigger groups slower, more groups faster) is the lesson, not the numbers.
      etcd's published benchmark is printed beside the model's for scale.
    - writes/s counts answers during the window; latency runs from the client's send to
      its answer (median and p99). `busiest CPU` is the busiest machine's share of the
      window spent handling messages, `msgs/write` the messages it handled per write.
    - `clients/(w/s)` is the clients divided by writes/s: by Little's law a closed loop's
      mean latency, so the latency is mostly waiting in the leader's queue.
    - `held by` names the lowest of three caps the model computes at mean delays: CPU (the
      busiest machine's cost per write), batch (a batch per AppendEntries round trip) or
      clients (clients divided by the unloaded commit latency), with that cap in writes/s.

EXIT STATUS:
    0 success, 2 usage error
";

const OPTIONS: [&str; 9] = [
    "--seed",
    "--duration-ms",
    "--format",
    "--clients",
    "--message-cpu-us",
    "--entry-cpu-us",
    "--batch",
    "--servers",
    "--groups",
];

/// A whole-number option, or the model's default.
fn number<T: std::str::FromStr>(value: Option<String>, option: &str, default: T) -> Result<T, UsageError> {
    match value {
        None => Ok(default),
        Some(v) => v
            .parse::<T>()
            .map_err(|_| UsageError(format!("bad {option} `{v}`; expected a whole number"))),
    }
}

/// Parses the options after `coordlab experiment consensus-throughput`.
pub fn parse(rest: &[String]) -> Result<ExperimentCommand, UsageError> {
    let [seed, duration, format, clients, message, entry, batch, servers, groups] =
        parse_options(rest, &OPTIONS, "consensus-throughput")?;
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
    let mut model = config.model();
    model.clients_per_group = number(clients, "--clients", model.clients_per_group)?;
    model.message_cpu_us = number(message, "--message-cpu-us", model.message_cpu_us)?;
    model.entry_cpu_us = number(entry, "--entry-cpu-us", model.entry_cpu_us)?;
    model.batch_entries = number(batch, "--batch", model.batch_entries)?;
    model.servers = number(servers, "--servers", model.servers)?;
    model.groups = number(groups, "--groups", model.groups)?;
    let config = config.with_model(model).map_err(UsageError)?;
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
        "mean_latency_ms": p.mean_us as f64 / 1_000.0,
        "clients_over_writes_per_s_ms": littles_us(p) as f64 / 1_000.0,
        "caps_writes_per_s": {"cpu": p.caps.cpu_per_s, "batch": p.caps.batch_per_s, "clients": p.caps.clients_per_s},
        "held_by": p.caps.binding().0.name(),
    })
}

fn json_report(report: &ThroughputReport) -> Value {
    let c = &report.config;
    json!({
        "experiment": "consensus-throughput",
        "seed": report.config.seed,
        "duration_ms": report.config.duration_ms,
        "warmup_ms": WARMUP_MS,
        "message_cpu_us": c.model.message_cpu_us,
        "entry_cpu_us": c.model.entry_cpu_us,
        "costs_are": "illustrative assumptions",
        "batch_entries": c.model.batch_entries,
        "latency_ms": {"min": LATENCY_MIN_US as f64 / 1_000.0, "max": LATENCY_MAX_US as f64 / 1_000.0},
        "durable_write_ms": DURABLE_WRITE_US as f64 / 1_000.0,
        "clients_per_group": c.model.clients_per_group,
        "by_cluster_size": report.by_size.iter().map(point_json).collect::<Vec<_>>(),
        "by_groups": report.by_groups.iter().map(point_json).collect::<Vec<_>>(),
        "setup": point_json(&report.setup),
        "published": {
            "source": ETCD_SOURCE,
            "url": ETCD_SOURCE_URL,
            "rows": ETCD_PUBLISHED.iter().map(|p| json!({
                "setup": p.setup,
                "clients": p.clients,
                "writes_per_s": p.writes_per_s,
                "latency_ms": p.latency_tenth_ms as f64 / 10.0,
            })).collect::<Vec<_>>(),
        },
    })
}

fn row(out: &mut String, first: String, p: &Point) {
    let _ = writeln!(
        out,
        "  {first:<22} {:>9} {:>10} {:>10} {:>9}.{}% {:>7}.{:02} {:>13} {:>8} {:>7}",
        p.writes_per_s,
        ms(p.median_us),
        ms(p.p99_us),
        p.busiest_cpu_permille / 10,
        p.busiest_cpu_permille % 10,
        p.messages_per_write_centi / 100,
        p.messages_per_write_centi % 100,
        ms(littles_us(p)),
        p.caps.binding().0.name(),
        p.caps.binding().1,
    );
}

/// Clients in flight divided by writes per second: Little's law's mean latency.
fn littles_us(p: &Point) -> u64 {
    let in_flight = u64::from(p.clients_in_flight());
    in_flight * 1_000_000 / p.writes_per_s.max(1)
}

fn header(out: &mut String, first: &str) {
    let _ = writeln!(
        out,
        "  {first:<22} {:>9} {:>10} {:>10} {:>11} {:>10} {:>13} {:>8} {:>7}",
        "writes/s", "median ms", "p99 ms", "busiest CPU", "msgs/write", "clients/(w/s)", "held by", "cap"
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
        "model       {} us CPU per message in or out, {} us per entry (illustrative assumptions, not measurements) · batch {} · network {}-{} ms · disk write {} ms · {} clients per group",
        c.model.message_cpu_us,
        c.model.entry_cpu_us,
        c.model.batch_entries,
        ms(LATENCY_MIN_US),
        ms(LATENCY_MAX_US),
        ms(DURABLE_WRITE_US),
        c.model.clients_per_group
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
    let _ = writeln!(out);
    let s = &report.setup;
    let _ = writeln!(
        out,
        "your setup: {} group(s) of {} on {} machines",
        s.layout.groups, s.layout.replicas, s.layout.machines
    );
    header(&mut out, "setup");
    row(&mut out, "--servers/--groups".into(), s);
    let _ = writeln!(out);
    let _ = writeln!(out, "published, for scale: {ETCD_SOURCE}");
    let _ = writeln!(out, "  {ETCD_SOURCE_URL}");
    for p in &ETCD_PUBLISHED {
        let _ = writeln!(
            out,
            "  {:<30} {:>9} writes/s at {}.{} ms",
            p.setup,
            p.writes_per_s,
            p.latency_tenth_ms / 10,
            p.latency_tenth_ms % 10
        );
    }
    out
}
