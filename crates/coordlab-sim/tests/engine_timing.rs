//! A run's node-side delays ([`Timing`]) through the whole engine: a durable write holds back
//! what its handler sends after it, and timers fire late by a seeded draw. The participant is
//! a toy voter, so only the engine's rules are under test.

use coordlab_sim::kernel::engine::{Engine, Limits, Recording};
use coordlab_sim::kernel::ids::NodeId;
use coordlab_sim::kernel::network::LinkConfig;
use coordlab_sim::kernel::participant::{Card, Ctx, Label, Participant, ViewCtx};
use coordlab_sim::kernel::setup::Setup;
use coordlab_sim::kernel::timing::Timing;
use coordlab_sim::kernel::view::{Summary, Tone};
use coordlab_sim::trace::{EventKind, Trace};

#[derive(Clone, Debug, PartialEq)]
struct Word(&'static str);
impl Label for Word {
    fn label(&self) -> String {
        self.0.into()
    }
}
coordlab_sim::inbox!(Word);

#[derive(Clone, Debug, PartialEq)]
struct Tick;
impl Label for Tick {
    fn label(&self) -> String {
        "tick".into()
    }
}

/// Node 0 answers a `vote?` like a voter: `refused` at once, then persists and sends
/// `granted`. On start it sets a 100 ms timer, and node 1 asks its question.
struct Voter;

impl Participant for Voter {
    type Msg = Word;
    type Timer = Tick;
    type Durable = u32;
    type Config = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if ctx.node == NodeId(0) {
            ctx.set_timer(Tick, 100_000);
        } else {
            ctx.send(NodeId(0), Word("vote?"));
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: Word) {
        if msg.0 == "vote?" {
            ctx.send(from, Word("refused"));
            ctx.persist(1);
            ctx.persist(2); // one handler writes once, however often it persists
            ctx.send(from, Word("granted"));
        }
    }

    fn recover(_config: &(), _id: NodeId, _durable: &u32) -> Self {
        Voter
    }
}

impl Card for Voter {
    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        Summary::new("voter", Tone::Quiet)
    }
}

fn run(timing: Timing, seed: u64) -> Trace {
    run_over(timing, seed, 1_000)
}

/// A run whose links take 1 ms to `latency_max_us`, uniformly.
fn run_over(timing: Timing, seed: u64, latency_max_us: u64) -> Trace {
    let mut setup = Setup::new(LinkConfig::reliable(1_000, latency_max_us));
    setup.timing = timing;
    for name in ["A", "B"] {
        setup.add::<Voter>(name, "voter", &[], (), 0);
    }
    Engine::new(setup, seed, &[], Limits::default(), Recording::Lines)
        .expect("no actions")
        .run("timing", seed, coordlab_sim::scenarios::Params::new())
}

/// When `word` arrived and when it left its sender.
fn arrival(trace: &Trace, word: &str) -> (u64, u64) {
    let e = trace
        .entries
        .iter()
        .find(|e| e.kind == EventKind::Deliver && e.message.as_ref().is_some_and(|m| m.label == word))
        .unwrap_or_else(|| panic!("{word} arrives"));
    (e.message.as_ref().expect("a delivery").sent_us, e.time_us)
}

fn timer_fired_at(trace: &Trace) -> u64 {
    trace
        .entries
        .iter()
        .find(|e| e.kind == EventKind::Timer)
        .expect("the timer fires")
        .time_us
}

#[test]
fn a_durable_write_delays_what_follows_it_by_exactly_its_cost() {
    let plain = run(Timing::default(), 1);
    // The question arrives at 1 ms; both answers leave then and arrive at 2 ms.
    assert_eq!(arrival(&plain, "refused"), (1_000, 2_000));
    assert_eq!(arrival(&plain, "granted"), (1_000, 2_000));
    let disk = run(
        Timing {
            durable_write_us: 7_000,
            timer_jitter_us: 0,
        },
        1,
    );
    assert_eq!(arrival(&disk, "refused"), (1_000, 2_000), "sent before the write");
    assert_eq!(
        arrival(&disk, "granted"),
        (8_000, 9_000),
        "one write of 7 ms, then the wire"
    );
    assert_eq!(timer_fired_at(&disk), 100_000, "timers are not delayed by writes");
}

#[test]
fn no_jitter_is_exact_and_jitter_fires_within_its_window() {
    for seed in 0..50 {
        assert_eq!(timer_fired_at(&run(Timing::default(), seed)), 100_000);
    }
    let jitter = |seed| {
        let timing = Timing {
            durable_write_us: 0,
            timer_jitter_us: 3_000,
        };
        timer_fired_at(&run(timing, seed))
    };
    let fired: Vec<u64> = (0..200).map(jitter).collect();
    assert!(fired.iter().all(|t| (100_000..=103_000).contains(t)), "{fired:?}");
    assert!(fired.iter().any(|t| *t < 101_000) && fired.iter().any(|t| *t > 102_000));
    assert_eq!(
        jitter(5),
        jitter(5),
        "the lateness is a pure function of the seed"
    );
}

#[test]
fn jitter_draws_from_its_own_stream_only() {
    // Turning jitter on leaves the network's draws where they were: every message of a
    // random-latency link arrives when it did without jitter.
    let jitter = Timing {
        durable_write_us: 0,
        timer_jitter_us: 3_000,
    };
    for seed in 0..20 {
        let plain = run_over(Timing::default(), seed, 50_000);
        let jittery = run_over(jitter, seed, 50_000);
        for word in ["vote?", "refused", "granted"] {
            assert_eq!(arrival(&plain, word), arrival(&jittery, word), "seed {seed}");
        }
    }
}
