//! `clock-skew` (curriculum §4–5): worker A takes a 30 s lease on account 42 (token 33) and
//! never renews it. Before every step of its six-step job it asks its *own* clock whether
//! the lease is still good, while the lease store judges expiry by *its* clock. The two
//! clocks disagree: A's runs at `drift_ppm` from the start, and at 16 s an NTP-style
//! correction may step it by `offset_ms`.
//!
//! With a correct clock A does five steps, sees its lease run out before step 6 and stops;
//! B takes over after the store's expiry and does the last step. With A's clock 20% slow
//! (the default), A's steps take longer in real time and its clock says it still has six
//! seconds left when the store has already expired the lease. B takes over with token 34,
//! and for about seven seconds both believe they hold the lease. A's late step-5 write
//! carries 33 and arrives after B's first write, so the ledger's write predicate refuses it.
//!
//! The fence only refuses a token lower than the highest *it has seen*: a stale write that
//! lands after B took over but before B's first write goes through, and B redoes that step.
//! Other drifts and steps show exactly that, which is why the expectation is worked out
//! from the timeline below rather than assumed.
//!
//! Why the offset is a step at 16 s and not an offset from time 0: A measures its lease as
//! "my reading when I asked + 30 s" on one clock, so a constant offset cancels out. Only a
//! different rate, or a step between asking and checking, changes what A concludes.

use super::lease_setup::{build, int, worker, LeasePlan, StorePlan, OPENING_BALANCE};
use super::lease_world::LeaseProperty::*;
use super::{Expectation, ParamKind, ParamSpec, Params, ScenarioInfo};
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease_worker::WorkerPlan;
use serde_json::json;

pub const ID: &str = "clock-skew";
/// Worker A: the first node after the lease store.
const A: NodeId = NodeId(1);
const AMOUNT: i64 = 10;
const STEPS: u32 = 6;
/// Five steps fill the TTL exactly by a correct clock, so A's own check stops it before
/// step 6 just as the store's expiry passes.
const STEP_MS: u64 = 6_000;
const TTL_MS: u64 = 30_000;
/// B polls this rarely so the trace stays short; its takeover lands about 0.5 s after the
/// store's expiry, well after a correct-clock A has stopped.
const RETRY_MS: u64 = 10_000;
const A_START_MS: (u64, u64) = (0, 100);
const B_START_MS: (u64, u64) = (500, 600);
const LATENCY_US: (u64, u64) = (MS_US, 4 * MS_US);
/// When A's clock is stepped by `offset_ms`. Late enough that a step back of the largest
/// allowed size cannot take the reading below zero (0.7 × 16 s > 10 s), early enough that
/// every allowed clock still has checks to make afterwards.
const CLOCK_STEP_AT_MS: u64 = 16_000;
const MAX_OFFSET_MS: i64 = 10_000;
const MAX_DRIFT_PPM: i64 = 300_000;

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 3,
        sections: "§4–5",
        title: "Clock skew",
        summary: "A judges its lease by its own slow clock and keeps working after the store has expired it and granted it to B. Both believe they hold the lease; the write predicate has to catch A's late write.",
        params: vec![
            ParamSpec {
                key: "offset_ms",
                label: "A's clock step at 16 s",
                help: "At 16 s an NTP-style correction steps worker-A's clock by this much (negative: back). A constant offset would change nothing: A times its lease on its own clock.",
                default: "0",
                kind: ParamKind::Int {
                    min: -MAX_OFFSET_MS,
                    max: MAX_OFFSET_MS,
                    unit: "ms",
                },
            },
            ParamSpec {
                key: "drift_ppm",
                label: "A's clock rate",
                help: "How fast worker-A's clock runs from the start, in parts per million; -200000 means 20% slow. The store's and B's clocks are correct.",
                default: "-200000",
                kind: ParamKind::Int {
                    min: -MAX_DRIFT_PPM,
                    max: MAX_DRIFT_PPM,
                    unit: "ppm",
                },
            },
        ],
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let mut outcome = Vec::new();
    // The store judges only by its own clock and B polls after the expiry, so the store
    // itself never double-grants; every write is fenced; B always has time to finish.
    let mut verdicts = vec![
        ("tokens-increase".to_string(), Verdict::Holds),
        ("no-overlapping-grants".to_string(), Verdict::Holds),
        ("fence-monotonic".to_string(), Verdict::Holds),
        ("job-completes".to_string(), Verdict::Holds),
    ];
    let forecast = forecast(int(params, "offset_ms"), int(params, "drift_ppm"));
    if let Some(holders) = forecast.holders {
        outcome.push(("max_concurrent_holders".to_string(), json!(holders)));
        if holders == 1 {
            outcome.push(("unsafe_window_ms".to_string(), json!(0)));
        }
    }
    if let Some(double) = forecast.double_debit {
        verdicts.push((
            "no-double-debit".to_string(),
            if double { Verdict::Violated } else { Verdict::Holds },
        ));
        if !double {
            outcome.push((
                "balance".to_string(),
                json!(OPENING_BALANCE - AMOUNT * i64::from(STEPS)),
            ));
        }
    }
    Expectation { outcome, verdicts }
}

/// What the timeline guarantees for every seed; `None` where jitter could go either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forecast {
    pub holders: Option<u32>,
    pub double_debit: Option<bool>,
}

const UNKNOWN: Forecast = Forecast {
    holders: None,
    double_debit: None,
};

/// The earliest and latest true time (µs) an event can happen at, over every seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    lo: u64,
    hi: u64,
}

impl Span {
    fn plus(self, o: Span) -> Span {
        Span {
            lo: self.lo + o.lo,
            hi: self.hi + o.hi,
        }
    }
    fn shift(self, us: u64) -> Span {
        Span {
            lo: self.lo + us,
            hi: self.hi + us,
        }
    }
    fn times(self, n: u64) -> Span {
        Span {
            lo: self.lo * n,
            hi: self.hi * n,
        }
    }
    /// Surely earlier than `o`, whatever the seed.
    fn before(self, o: Span) -> bool {
        self.hi < o.lo
    }
}

fn ms(range: (u64, u64)) -> Span {
    Span {
        lo: range.0 * MS_US,
        hi: range.1 * MS_US,
    }
}

/// Works out the run from the parameters, carrying every jittered time as an interval
/// (start draws, 1–4 ms per message). A's whole job runs on its own clock; its checks
/// compare "reading now − reading when I asked" with the TTL. Returns only what holds for
/// every seed.
pub fn forecast(offset_ms: i64, drift_ppm: i64) -> Forecast {
    let lat = Span {
        lo: LATENCY_US.0,
        hi: LATENCY_US.1,
    };
    let rate = (1_000_000 + drift_ppm.clamp(-MAX_DRIFT_PPM, MAX_DRIFT_PPM)) as u64;
    // The kernel's conversion of a local duration to true time.
    let step_true_us = (u128::from(STEP_MS * MS_US) * 1_000_000).div_ceil(u128::from(rate)) as u64;
    let a = ms(A_START_MS);
    let ttl_us = TTL_MS * MS_US;
    let step_at_us = CLOCK_STEP_AT_MS * MS_US;
    let offset_us = offset_ms.clamp(-MAX_OFFSET_MS, MAX_OFFSET_MS) * 1_000;

    // A alone: its checks and writes. `rel` is the time since A asked for the lease (grant,
    // progress read and reply: four messages before the first check).
    let mut rel = lat.times(4);
    let mut writes: Vec<(Span, Span)> = Vec::new(); // (arrives at the ledger, answer back)
    let mut stopped_at = None;
    for _step in 1..=STEPS {
        let check = a.plus(rel);
        let read = |us: u64| (u128::from(us) * u128::from(rate) / 1_000_000) as i64;
        // ±3 µs for the clock's integer rounding at the ask, the check and the step.
        let (elapsed_lo, elapsed_hi) = (read(rel.lo) - 3, read(rel.hi) + 3);
        let stepped: &[bool] = if offset_us == 0 || check.hi < step_at_us {
            &[false]
        } else if check.lo >= step_at_us {
            &[true]
        } else {
            &[false, true]
        };
        let mut stop = None;
        for &s in stepped {
            let shift = if s { offset_us } else { 0 };
            let this = if elapsed_lo + shift >= ttl_us as i64 {
                true
            } else if elapsed_hi + shift < ttl_us as i64 {
                false
            } else {
                return UNKNOWN;
            };
            if stop.is_some_and(|s| s != this) {
                return UNKNOWN;
            }
            stop = Some(this);
        }
        if stop == Some(true) {
            stopped_at = Some(check);
            break;
        }
        let arrives = check.shift(step_true_us).plus(lat);
        rel = rel.shift(step_true_us).plus(lat.times(2));
        writes.push((arrives, a.plus(rel)));
    }
    let finished = stopped_at.is_none();
    let mut a_end = stopped_at.unwrap_or(a.plus(rel));

    // The lease is free from the store's expiry, or from A's release if A finished first.
    let expiry = a.plus(lat).shift(ttl_us);
    let free = if finished {
        let release = a_end.plus(lat);
        Span {
            lo: release.lo.min(expiry.lo),
            hi: release.hi.min(expiry.hi),
        }
    } else {
        expiry
    };
    // B's requests reach the store every RETRY_MS plus a round trip; the first one after
    // the lease is free takes it.
    let b_first = ms(B_START_MS).plus(lat);
    let b_period = lat.times(2).shift(RETRY_MS * MS_US);
    let mut b_takes = None;
    for k in 0..16 {
        let at = b_first.plus(b_period.times(k));
        if at.before(free) {
            continue;
        }
        if free.before(at) {
            b_takes = Some(at);
        }
        break;
    }
    let Some(b_takes) = b_takes else {
        return UNKNOWN;
    };
    let b_granted = b_takes.plus(lat);
    let b_reads = b_takes.plus(lat.times(2));
    let b_first_write = b_takes.plus(lat.times(4)).shift(STEP_MS * MS_US);

    // A's writes against B: counted by B's progress read, refused after B's first write, or
    // — in between — applied and then redone by B.
    let mut double_debit = Some(false);
    for (arrives, back) in writes {
        if arrives.before(b_reads) {
            continue;
        }
        if b_first_write.before(arrives) {
            a_end = back; // A learns of the refusal and aborts
            break;
        }
        if !arrives.before(b_first_write) {
            // Applied or refused depending on the seed: so is A's end, and the verdict
            // unless an earlier write already settled it.
            return Forecast {
                holders: None,
                double_debit: double_debit.filter(|d| *d),
            };
        }
        // Applied for sure: after B's read it is a step B will do again.
        if b_reads.before(arrives) {
            double_debit = Some(true);
        } else if double_debit == Some(false) {
            double_debit = None;
        }
    }
    let holders = if b_granted.before(a_end) {
        Some(2)
    } else if a_end.before(b_granted) {
        Some(1)
    } else {
        None
    };
    Forecast {
        holders,
        double_debit,
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let a = WorkerPlan {
        ttl_ms: TTL_MS,
        heartbeat_ms: 0,
        start_after_ms: A_START_MS,
        retry_ms: RETRY_MS,
        steps: STEPS,
        step_ms: STEP_MS,
        amount_per_step: AMOUNT,
        check_clock_before_step: true,
        ..WorkerPlan::leased("account-42")
    };
    let b = WorkerPlan {
        start_after_ms: B_START_MS,
        ..a.clone()
    };
    let mut setup = build(LeasePlan {
        store: Some(StorePlan {
            clock_faults: true,
            ..StorePlan::with_tokens_issued(32)
        }),
        workers: vec![worker("worker-A", a), worker("worker-B", b)],
        properties: vec![
            TokensIncrease,
            NoOverlappingGrants,
            FenceMonotonic,
            NoDoubleDebit,
            JobCompletes,
        ],
        ..LeasePlan::default()
    });
    // The forecast counts on this latency.
    setup.link = LinkConfig::reliable(LATENCY_US.0, LATENCY_US.1);
    // Both clock faults take the same path as a fault injected from the UI.
    let drift_ppm = int(params, "drift_ppm");
    let offset_ms = int(params, "offset_ms");
    if drift_ppm != 0 {
        setup.script(0, Fault::ClockDrift { node: A, drift_ppm });
    }
    if offset_ms != 0 {
        let jump = Fault::ClockJump {
            node: A,
            delta_ms: offset_ms,
        };
        setup.script(CLOCK_STEP_AT_MS * MS_US, jump);
    }
    setup
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forecast_decides_the_two_headline_variants() {
        assert_eq!(
            forecast(0, -200_000),
            Forecast {
                holders: Some(2),
                double_debit: Some(false)
            }
        );
        assert_eq!(
            forecast(0, 0),
            Forecast {
                holders: Some(1),
                double_debit: Some(false)
            }
        );
    }

    #[test]
    fn a_stale_write_between_b_s_takeover_and_b_s_first_write_is_forecast_as_a_double_debit() {
        // 10% slow: A's step-5 write lands about 3 s after B took over, before B writes.
        assert_eq!(forecast(0, -100_000).double_debit, Some(true));
    }
}
