//! Simulator throughput, in simulated events per second of wall time.
//!
//! `cargo bench -p coordlab-sim` runs this (`harness = false`: a plain `main`). It measures:
//!
//! 1. A long run of a bench-only "chatter" world — five participants that keep pinging each
//!    other, re-arm timers and persist a counter — under a seeded random fault schedule
//!    (crash + restart, pause, partition + heal, hold + release), with `Recording::Summary`.
//! 2. A shorter run of the same world with each `Recording` mode, to show what trace lines
//!    and snapshots cost.
//! 3. A sweep of 10,000 seeds of the real `lost-update` scenario per lock mode.
//!
//! Output is plain text lines, ready to paste into a README. Wall-clock time is read here,
//! in the bench, never in the simulator.

use coordlab_sim::kernel::engine::{Engine, Limits, Recording};
use coordlab_sim::kernel::faults::{Fault, FaultKind};
use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::network::LinkConfig;
use coordlab_sim::kernel::participant::{Card, Ctx, Label, Participant, ViewCtx};
use coordlab_sim::kernel::rng::{between_us, stream, SimRng, Stream};
use coordlab_sim::kernel::setup::Setup;
use coordlab_sim::kernel::time::{MS_US, SEC_US};
use coordlab_sim::kernel::world::{Nodes, World};
use coordlab_sim::properties::{PropertyKind, PropertySpec};
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::trace::{Summary, TableView, Tone, Trace};
use coordlab_sim::RunRequest;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// The chatter world
// ---------------------------------------------------------------------------------------

const NODES: u32 = 5;
/// Each fresh ping is forwarded this many times before it dies.
const TTL: u32 = 6;
/// A node starts a fresh ping every 2..6 ms of its local time.
const TICK_US: (u64, u64) = (2 * MS_US, 6 * MS_US);
/// And persists its counter every 20 ms (and every 64 messages).
const FLUSH_US: u64 = 20 * MS_US;
const SEED: u64 = 7;

coordlab_sim::inbox!(Ping);

#[derive(Clone, Debug)]
struct Ping {
    origin: NodeId,
    hops_left: u32,
}

impl Label for Ping {
    fn label(&self) -> String {
        format!("ping from {} ({} hops left)", self.origin, self.hops_left)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum ChatTimer {
    Tick,
    Flush,
}

impl Label for ChatTimer {
    fn label(&self) -> String {
        match self {
            ChatTimer::Tick => "tick".to_string(),
            ChatTimer::Flush => "flush counter".to_string(),
        }
    }
}

#[derive(Clone, Debug, Default)]
struct ChatDurable {
    received: u64,
}

#[derive(Clone, Debug)]
struct Chatter {
    id: NodeId,
    received: u64,
    sent: u64,
    persisted: u64,
}

impl Chatter {
    fn random_peer(&self, rng: &mut SimRng) -> NodeId {
        let pick = between_us(rng, 0, u64::from(NODES) - 2) as u32;
        NodeId(if pick >= self.id.0 { pick + 1 } else { pick })
    }

    fn send_ping(&mut self, ctx: &mut Ctx<'_, Self>, ping: Ping) {
        let to = self.random_peer(ctx.rng);
        self.sent += 1;
        ctx.send(to, ping);
    }

    fn persist(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.persisted = self.received;
        ctx.persist(ChatDurable {
            received: self.received,
        });
    }
}

impl Participant for Chatter {
    type Msg = Ping;
    type Timer = ChatTimer;
    type Durable = ChatDurable;
    type Config = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        let first = between_us(ctx.rng, TICK_US.0, TICK_US.1);
        ctx.set_timer(ChatTimer::Tick, first);
        ctx.set_timer(ChatTimer::Flush, FLUSH_US);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, _from: NodeId, msg: Ping) {
        self.received += 1;
        if msg.hops_left > 0 {
            self.send_ping(
                ctx,
                Ping {
                    origin: msg.origin,
                    hops_left: msg.hops_left - 1,
                },
            );
        }
        if self.received.is_multiple_of(64) {
            self.persist(ctx);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ChatTimer) {
        match timer {
            ChatTimer::Tick => {
                self.send_ping(
                    ctx,
                    Ping {
                        origin: self.id,
                        hops_left: TTL,
                    },
                );
                let next = between_us(ctx.rng, TICK_US.0, TICK_US.1);
                ctx.set_timer(ChatTimer::Tick, next);
            }
            ChatTimer::Flush => {
                self.persist(ctx);
                ctx.set_timer(ChatTimer::Flush, FLUSH_US);
            }
        }
    }

    fn on_peer_down(&mut self, ctx: &mut Ctx<'_, Self>, peer: NodeId) {
        ctx.note(format!("{} lost its connection to {peer}", self.id));
    }

    fn watches(&self, peer: NodeId) -> bool {
        peer != self.id
    }

    fn recover(_config: &(), id: NodeId, durable: &ChatDurable) -> Self {
        Chatter {
            id,
            received: durable.received,
            sent: 0,
            persisted: durable.received,
        }
    }
}

impl Card for Chatter {
    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        Summary::new("chatting", Tone::Quiet)
            .badge("received", self.received)
            .badge("sent", self.sent)
    }

    fn durable_summary(_config: &(), durable: &ChatDurable, _view: &ViewCtx<'_>) -> Summary {
        Summary::new("down", Tone::Failed).detail(format!("on disk: received {}", durable.received))
    }
}

struct ChatWorld;

impl ChatWorld {
    /// Each node's live state (None while crashed) and what it persisted.
    fn counters<'a, 'n>(
        nodes: &'n Nodes<'a>,
    ) -> impl Iterator<Item = (Option<&'a Chatter>, &'a ChatDurable)> + 'n {
        (0..nodes.len()).map(move |i| {
            let id = NodeId(i as u32);
            (
                nodes.live::<Chatter>(id),
                nodes.durable::<Chatter>(id).expect("every node chats"),
            )
        })
    }
}

impl World for ChatWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            PropertySpec {
                name: "persisted-not-ahead",
                kind: PropertyKind::Always,
                description: "No live node has persisted more than it has received.",
            },
            PropertySpec {
                name: "someone-chatted",
                kind: PropertyKind::Eventually,
                description: "Some node has persisted a message count.",
            },
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        let (mut ok, mut chatted) = (true, false);
        for (l, d) in Self::counters(nodes) {
            ok &= l.is_none_or(|c| d.received <= c.received);
            chatted |= d.received > 0;
        }
        out.push(ok);
        out.push(chatted);
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let rows = Self::counters(nodes)
            .enumerate()
            .map(|(i, (l, d))| {
                vec![
                    format!("n{i}"),
                    l.map_or("—".to_string(), |c| c.received.to_string()),
                    d.received.to_string(),
                ]
            })
            .collect();
        vec![TableView {
            title: "counters".to_string(),
            columns: vec!["node".into(), "received".into(), "persisted".into()],
            rows,
        }]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        // A crashed node counts what it persisted.
        let received: u64 = Self::counters(nodes)
            .map(|(l, d)| l.map_or(d.received, |c| c.received))
            .sum();
        let persisted: u64 = Self::counters(nodes).map(|(_, d)| d.received).sum();
        let mut out = BTreeMap::new();
        out.insert("received".to_string(), serde_json::json!(received));
        out.insert("persisted_received".to_string(), serde_json::json!(persisted));
        out
    }
}

#[derive(Default)]
struct FaultMix {
    crash: u32,
    pause: u32,
    partition: u32,
    hold: u32,
}

impl FaultMix {
    fn total_events(&self) -> u32 {
        2 * self.crash + self.pause + 2 * self.partition + 2 * self.hold
    }
}

/// A seeded random fault schedule at true times up to `horizon_us`: one fault every
/// 20..120 ms, each a crash (restart 5..150 ms later), a pause of 1..80 ms, a partition of a
/// random group (healed 5..200 ms later) or a held link (released 5..100 ms later).
fn fault_schedule(seed: u64, horizon_us: u64) -> (Vec<(u64, Fault)>, FaultMix) {
    let mut rng = stream(seed, Stream::Workload);
    let mut out = Vec::new();
    let mut mix = FaultMix::default();
    let node = |rng: &mut SimRng| NodeId(between_us(rng, 0, u64::from(NODES) - 1) as u32);
    let mut t = 0;
    loop {
        t += between_us(&mut rng, 20 * MS_US, 120 * MS_US);
        if t > horizon_us {
            break;
        }
        match between_us(&mut rng, 0, 3) {
            0 => {
                let n = node(&mut rng);
                out.push((t, Fault::Crash { node: n }));
                out.push((
                    t + between_us(&mut rng, 5 * MS_US, 150 * MS_US),
                    Fault::Restart { node: n },
                ));
                mix.crash += 1;
            }
            1 => {
                let n = node(&mut rng);
                out.push((
                    t,
                    Fault::Pause {
                        node: n,
                        duration_ms: between_us(&mut rng, 1, 80),
                    },
                ));
                mix.pause += 1;
            }
            2 => {
                let mask = between_us(&mut rng, 1, (1 << NODES) - 2);
                let side = (0..NODES).filter(|i| mask & (1 << i) != 0).map(NodeId).collect();
                out.push((t, Fault::Partition { side }));
                out.push((t + between_us(&mut rng, 5 * MS_US, 200 * MS_US), Fault::Heal));
                mix.partition += 1;
            }
            _ => {
                let from = node(&mut rng);
                let to = NodeId((from.0 + 1 + between_us(&mut rng, 0, u64::from(NODES) - 2) as u32) % NODES);
                out.push((t, Fault::HoldLink { from, to }));
                out.push((
                    t + between_us(&mut rng, 5 * MS_US, 100 * MS_US),
                    Fault::ReleaseLink { from, to },
                ));
                mix.hold += 1;
            }
        }
    }
    (out, mix)
}

/// The world makes roughly 6.5 events per simulated ms, so 2M events take ~310 s; the fault
/// schedule runs a little past that.
const FAULT_HORIZON_US: u64 = 400 * SEC_US;

fn chatter_setup(scripted: Vec<(u64, Fault)>) -> Setup {
    let faults = [
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Network,
    ];
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    for i in 0..NODES {
        setup.add::<Chatter>(
            format!("chatter-{i}"),
            "chatter",
            &faults,
            (),
            ChatDurable::default(),
        );
    }
    for (at_us, fault) in scripted {
        setup.script(at_us, fault);
    }
    setup.set_world(ChatWorld);
    setup
}

fn chatter_run(schedule: &[(u64, Fault)], max_events: u64, recording: Recording) -> (Duration, Trace) {
    let limits = Limits {
        max_events,
        max_time_us: u64::MAX,
    };
    let setup = chatter_setup(schedule.to_vec());
    let start = Instant::now();
    let engine = Engine::new(setup, SEED, &[], limits, recording).expect("no actions");
    let trace = engine.run("chatter", SEED, coordlab_sim::scenarios::Params::new());
    let elapsed = start.elapsed();
    (elapsed, black_box(trace))
}

// ---------------------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------------------

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn rate(count: u64, d: Duration) -> String {
    let r = count as f64 / secs(d).max(1e-9);
    if r >= 1e6 {
        format!("{:.2} M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k", r / 1e3)
    } else {
        format!("{r:.0} ")
    }
}

fn best_and_median(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[0], times[times.len() / 2])
}

fn mode_name(r: Recording) -> &'static str {
    match r {
        Recording::Summary => "summary",
        Recording::Lines => "lines",
        Recording::Full => "full",
    }
}

/// Runs the chatter world `reps` times and prints one line; all runs must be identical.
fn measure_chatter(schedule: &[(u64, Fault)], max_events: u64, recording: Recording, reps: usize) -> Trace {
    let mut times = Vec::new();
    let mut first: Option<Trace> = None;
    for _ in 0..reps {
        let (t, trace) = chatter_run(schedule, max_events, recording);
        times.push(t);
        match &first {
            None => first = Some(trace),
            Some(f) => {
                assert_eq!(f.event_count, trace.event_count, "nondeterministic event count");
                assert_eq!(f.outcome, trace.outcome, "nondeterministic outcome");
                drop(trace);
            }
        }
    }
    let trace = first.expect("reps > 0");
    let (best, median) = best_and_median(times);
    let check = if recording == Recording::Summary {
        let o = |k: &str| trace.outcome.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
        format!(
            "messages received {} (persisted {})",
            o("received"),
            o("persisted_received")
        )
    } else {
        format!("fingerprint {:016x}", trace.fingerprint())
    };
    let events = trace.event_count;
    println!(
        "chatter  {:<8} {:>9} events  best {:>7.3} s = {:>9}events/s   median {:>7.3} s = {:>9}events/s   {check}",
        mode_name(recording),
        events,
        secs(best),
        rate(events, best),
        secs(median),
        rate(events, median),
    );
    trace
}

fn lost_update_sweep(lock: &str, seeds: u64, reps: usize) {
    let mut params = Params::new();
    params.insert("lock".to_string(), lock.to_string());
    let base = RunRequest {
        scenario: "lost-update".to_string(),
        params,
        seed: 0,
        actions: Vec::new(),
    };
    let expectation = expectation_for(&base).expect("valid request");
    let mut times = Vec::new();
    let mut events = 0;
    let mut mismatched = 0;
    for _ in 0..reps {
        events = 0;
        mismatched = 0;
        let mut request = base.clone();
        let start = Instant::now();
        for seed in 0..seeds {
            request.seed = seed;
            let trace =
                coordlab_sim::run(&request, Limits::default(), Recording::Summary).expect("valid request");
            events += trace.event_count;
            if !expectation.mismatches(&trace).is_empty() {
                mismatched += 1;
            }
            black_box(&trace);
        }
        times.push(start.elapsed());
    }
    let (best, median) = best_and_median(times);
    println!(
        "lost-update {:<25} {seeds} seeds {:>7} events  best {:>6.3} s = {:>8}runs/s {:>9}events/s   median {:>6.3} s   unexpected outcomes: {mismatched}",
        format!("lock={lock}"),
        events,
        secs(best),
        rate(seeds, best),
        rate(events, best),
        secs(median),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too. Keep it quick there.
    // `cargo bench -p coordlab-sim -- long` (or `modes`, `sweep`) runs one section only.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    let sections: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |s: &str| sections.is_empty() || sections.contains(&s);
    let (long_events, long_reps, short_events, short_reps, seeds, sweep_reps) = if quick {
        (200_000, 1, 5_000, 1, 500, 1)
    } else {
        (2_000_000, 5, 50_000, 5, 10_000, 3)
    };

    let (schedule, mix) = fault_schedule(SEED, FAULT_HORIZON_US);
    println!(
        "coordlab-sim throughput (wall clock, {} profile{})",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "optimized"
        },
        if quick { ", QUICK" } else { "" }
    );
    println!(
        "chatter world: {NODES} nodes, pings with TTL {TTL}, links 1..4 ms; seed {SEED}; scripted faults over {} s: {} crash+restart, {} pause, {} partition+heal, {} hold+release ({} fault events)",
        FAULT_HORIZON_US / SEC_US,
        mix.crash,
        mix.pause,
        mix.partition,
        mix.hold,
        mix.total_events()
    );

    if wanted("long") {
        println!("-- long run, Recording::Summary, best/median of {long_reps}");
        measure_chatter(&schedule, long_events, Recording::Summary, long_reps);
    }
    if wanted("modes") {
        recording_modes(&schedule, short_events, short_reps);
    }
    if wanted("scenarios") {
        println!("-- library scenarios, Recording::Full (what the player records), default parameters, seed 1, best/median of {sweep_reps}");
        for id in [
            "zombie-worker",
            "raft-election",
            "redis-failover",
            "raft-chaos",
            "consensus-lock",
        ] {
            scenario_full(id, sweep_reps);
        }
    }
    if wanted("sweep") {
        println!("-- lost-update sweep, Recording::Summary, Limits::default(), best/median of {sweep_reps}");
        for lock in ["none", "row-lock", "conditional-update"] {
            lost_update_sweep(lock, seeds, sweep_reps);
        }
    }
}

/// Records one library scenario with full snapshots, as the browser does.
fn scenario_full(id: &str, reps: usize) {
    let request = RunRequest {
        scenario: id.to_string(),
        params: Params::new(),
        seed: 1,
        actions: Vec::new(),
    };
    let mut times = Vec::new();
    let mut events = 0;
    for _ in 0..reps.max(3) {
        let start = Instant::now();
        let trace =
            coordlab_sim::run(&request, Limits::default(), Recording::Full).expect("library scenario runs");
        times.push(start.elapsed());
        events = trace.event_count;
        black_box(trace);
    }
    let (best, median) = best_and_median(times);
    println!(
        "{id:<22} full {events:>6} events  best {:7.1} ms   median {:7.1} ms   {}events/s",
        secs(best) * 1e3,
        secs(median) * 1e3,
        rate(events, best)
    );
}

fn recording_modes(schedule: &[(u64, Fault)], short_events: u64, short_reps: usize) {
    println!("-- recording modes, {short_events} events, best/median of {short_reps}");
    measure_chatter(schedule, short_events, Recording::Summary, short_reps);
    let lines = measure_chatter(schedule, short_events, Recording::Lines, short_reps);
    measure_chatter(schedule, short_events, Recording::Full, short_reps);

    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    for e in &lines.entries {
        *kinds.entry(e.kind.as_str()).or_default() += 1;
    }
    let end_us = lines.entries.last().map_or(0, |e| e.time_us);
    let mix_text: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!(
        "   event mix of the {short_events}-event run ({} ms simulated): {}",
        end_us / MS_US,
        mix_text.join(", ")
    );
    drop(lines);
}
