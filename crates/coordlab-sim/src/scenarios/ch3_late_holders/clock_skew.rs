//! `clock-skew` (curriculum §4–5): worker A takes a 30 s lease on account 42 (token 33) and
//! never renews it. Before every step of its six-step job it asks its *own* clock whether
//! the lease is still good, while the lease store judges expiry by *its* clock.
//!
//! Real clocks disagree in two ways. They drift: quartz runs within about ±100 ppm, a few
//! milliseconds over this lease, which changes nothing here (`drift_ppm`, default −100; the
//! range goes to ±30% only to show what rate alone would do). And they step: an NTP
//! correction or a VM resumed on another host moves the reading by seconds at once
//! (`offset_ms`, applied at 16 s with the kernel's clock-step fault). The default steps A's
//! clock back 5 s: A measures its lease 5 s too long and starts step 6 after the store has
//! expired it. B takes over with token 34 and reads the progress (five steps); A's step-6
//! write lands before B's first write, so the ledger has not seen 34 yet and applies it, and
//! B does step 6 again: a double debit, fence and all.
//!
//! `margin=10s` is the careful worker: it starts a step only if, by its own clock, the step
//! would end more than 10 s before the lease does. A step of up to 10 s either way (the whole
//! parameter range) then leaves one holder at a time.
//!
//! The fence only refuses a token lower than the highest *it has seen*: a stale write that
//! lands after B took over but before B's first write goes through, and B redoes that step.
//! A stale write that lands after B's first write is refused (20% slow, `drift_ppm=-200000`,
//! shows that). Which one happens is worked out from the timeline below rather than assumed.
//!
//! Why the offset is a step at 16 s and not an offset from time 0: A measures its lease as
//! "my reading when I asked + 30 s" on one clock, so a constant offset cancels out. Only a
//! different rate, or a step between asking and checking, changes what A concludes.

use super::clock_skew_beats;
use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::lease::lease_worker::WorkerPlan;
use crate::scenarios::common::int_param;
use crate::scenarios::lease_setup::{
    balance_after, build, choice, holds_if, int, millis, worker_pair, LeasePlan, StorePlan,
};
use crate::scenarios::lease_world::LeaseProperty::*;
use crate::scenarios::{Expectation, Listing, Params};

pub const ID: &str = "clock-skew";
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
/// How far real quartz clocks drift: about ±100 ppm, 3 ms over a 30 s lease.
pub const REAL_DRIFT_PPM: i64 = 100;
/// The careful worker's margin: more than any step the parameters allow.
pub const MARGIN_MS: u64 = 10_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a clock step make a holder trust a lease that has expired",
        "Keep a safety margin so the last step ends well before expiry",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "A's clock is set back 5 s. What does A believe about its lease?",
        answers: &[
            "It lasts 5 s longer than it does",
            "It expires 5 s sooner than it does",
            "Nothing changes",
        ],
        correct: 0,
        why: "A measures the lease with its own clock, so a clock moved back makes the lease look longer.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§4–5",
        title: "Clock skew",
        summary: "Real clock drift is milliseconds; a clock step is seconds. At 16 s an NTP correction sets A's clock back 5 s, so A judges its lease 5 s too long and starts one more step after the store has expired it, just before B's next poll takes it over. A's write lands before B's first one, the fence has not seen 34 yet, and the step is debited twice. With margin=10s, A starts a step only if it ends 10 s before the lease does by its own clock, and the run stays safe.",
        params: vec![
            choice(
                "margin",
                "A's safety margin",
                "How A judges its lease before each step, by its own clock.",
                &[
                    ("none", "none — starts a step while any of the lease is left"),
                    ("10s", "10 s — starts a step only if it ends 10 s before the lease does"),
                ],
            ),
            millis(
                "offset_ms",
                "A's clock step at 16 s",
                "At 16 s worker-A's clock is stepped by this much (negative: back), as an NTP correction or a VM resumed on another host can do: seconds at once. A constant offset would change nothing: A times its lease on its own clock. Any clock can also be stepped at any step with a clock-jump:N:MS action.",
                "-5000",
                (-MAX_OFFSET_MS, MAX_OFFSET_MS),
            ),
            int_param(
                "drift_ppm",
                "A's clock rate",
                "How fast worker-A's clock runs from the start, in parts per million (negative: slow). Real quartz stays within about ±100 ppm, 3 ms over this 30 s lease. Larger values are exaggerations that show what rate alone would do: -200000 is 20% slow. The store's and B's clocks are correct.",
                "-100",
                -MAX_DRIFT_PPM,
                MAX_DRIFT_PPM,
                "ppm",
            ),
        ],
    }
}

/// The margin the `margin` parameter chooses, if any.
pub fn margin(params: &Params) -> Option<u64> {
    (params.get("margin").map(String::as_str) == Some("10s")).then_some(MARGIN_MS)
}

pub fn expectation(params: &Params) -> Expectation {
    let mut outcome = Vec::new();
    // The store judges only by its own clock and B polls after the expiry, so the store
    // itself never double-grants; every write is fenced.
    let mut verdicts = vec![
        ("tokens-increase".to_string(), Verdict::Holds),
        ("no-overlapping-grants".to_string(), Verdict::Holds),
        ("fence-monotonic".to_string(), Verdict::Holds),
    ];
    let forecast = forecast(int(params, "offset_ms"), int(params, "drift_ppm"), margin(params));
    if let Some(completes) = forecast.job_completes {
        verdicts.push(("job-completes".to_string(), holds_if(completes)));
    }
    if let Some(holders) = forecast.holders {
        outcome.push(("max_concurrent_holders".to_string(), json!(holders)));
        if holders == 1 {
            outcome.push(("unsafe_window_ms".to_string(), json!(0)));
        }
    }
    if let Some(double) = forecast.double_debit {
        verdicts.push(("no-double-debit".to_string(), holds_if(!double)));
        if !double && forecast.job_completes == Some(true) {
            outcome.push(("balance".to_string(), json!(balance_after(STEPS))));
        }
    }
    Expectation { outcome, verdicts }
}

/// What the timeline guarantees for every seed; `None` where jitter could go either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forecast {
    pub holders: Option<u32>,
    pub double_debit: Option<bool>,
    pub job_completes: Option<bool>,
}

const UNKNOWN: Forecast = Forecast {
    holders: None,
    double_debit: None,
    job_completes: None,
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
/// compare "reading now − reading when I asked" with the TTL, less a step and the margin
/// when it keeps one. Returns only what holds for every seed.
pub fn forecast(offset_ms: i64, drift_ppm: i64, margin_ms: Option<u64>) -> Forecast {
    let lat = Span {
        lo: LATENCY_US.0,
        hi: LATENCY_US.1,
    };
    let rate = (1_000_000 + drift_ppm.clamp(-MAX_DRIFT_PPM, MAX_DRIFT_PPM)) as u64;
    // The kernel's conversion of a local duration to true time.
    let step_true_us = (u128::from(STEP_MS * MS_US) * 1_000_000).div_ceil(u128::from(rate)) as u64;
    let a = ms(A_START_MS);
    let ttl_us = TTL_MS * MS_US;
    // A worker stops once "elapsed by its own clock" reaches this.
    let reserve_us = margin_ms.map_or(0, |m| (STEP_MS + m) * MS_US);
    let limit = (ttl_us - reserve_us) as i64;
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
            let this = if elapsed_lo + shift >= limit {
                true
            } else if elapsed_hi + shift < limit {
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

    // Whether B, on a correct clock and by the same rule, has room for the steps B's
    // progress read leaves it: B's checks come 4 messages after it asked, then a step and
    // a round trip apart.
    let b_room = |lat_us: u64| {
        (0..u64::from(STEPS))
            .take_while(|k| (4 * lat_us + k * (STEP_MS * MS_US + 2 * lat_us)) < limit as u64)
            .count() as u32
    };
    let counted_surely = writes.iter().filter(|(w, _)| w.before(b_reads)).count() as u32;
    let counted_maybe = writes.iter().filter(|(w, _)| !b_reads.before(*w)).count() as u32;
    let room = (b_room(lat.lo), b_room(lat.hi));
    let job_completes = if STEPS - counted_surely <= room.1 {
        Some(true)
    } else if STEPS - counted_maybe > room.0 {
        Some(false)
    } else {
        None
    };

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
                job_completes,
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
        job_completes,
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let drift_ppm = int(params, "drift_ppm");
    let offset_ms = int(params, "offset_ms");
    let margin_ms = margin(params);
    let a = WorkerPlan {
        ttl_ms: TTL_MS,
        heartbeat_ms: 0,
        start_after_ms: A_START_MS,
        retry_ms: RETRY_MS,
        steps: STEPS,
        step_ms: STEP_MS,
        check_clock_before_step: true,
        finish_margin_ms: margin_ms,
        ..WorkerPlan::leased("account-42")
    };
    let (mut setup, cast) = build(LeasePlan {
        store: Some(StorePlan {
            clock_faults: true,
            ..StorePlan::with_tokens_issued(32)
        }),
        workers: worker_pair(a, B_START_MS),
        properties: vec![
            TokensIncrease,
            NoOverlappingGrants,
            FenceMonotonic,
            NoDoubleDebit,
            JobCompletes,
        ],
        ..LeasePlan::default()
    });
    let cast = cast.pair();
    // The forecast counts on this latency.
    setup.link = LinkConfig::reliable(LATENCY_US.0, LATENCY_US.1);
    // Both clock faults take the same path as a fault injected from the UI.
    if drift_ppm != 0 {
        setup.script(
            0,
            Fault::ClockDrift {
                node: cast.a,
                drift_ppm,
            },
        );
    }
    if offset_ms != 0 {
        let jump = Fault::ClockJump {
            node: cast.a,
            delta_ms: offset_ms,
        };
        setup.script(CLOCK_STEP_AT_MS * MS_US, jump);
    }
    let story = Story {
        offset_ms,
        drift_ppm,
        margin_ms,
        forecast: forecast(offset_ms, drift_ppm, margin_ms),
    };
    clock_skew_beats::beats(&mut setup, &story, cast);
    setup
}

/// What the beats need to know to tell this run's story.
pub struct Story {
    pub offset_ms: i64,
    pub drift_ppm: i64,
    pub margin_ms: Option<u64>,
    pub forecast: Forecast,
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn decided(holders: u32, double_debit: bool) -> Forecast {
        Forecast {
            holders: Some(holders),
            double_debit: Some(double_debit),
            job_completes: Some(true),
        }
    }

    #[test]
    fn the_forecast_decides_the_headline_variants() {
        // The default: real drift, a 5 s step back. Two holders, and A's step-6 write lands
        // between B's takeover and B's first write.
        assert_eq!(forecast(-5_000, -100, None), decided(2, true));
        // The same clock with a 10 s margin: one holder.
        assert_eq!(forecast(-5_000, -100, Some(MARGIN_MS)), decided(1, false));
        // Real drift alone changes nothing.
        assert_eq!(forecast(0, -100, None), decided(1, false));
        assert_eq!(forecast(0, 0, None), decided(1, false));
        // An exaggerated drift: two holders, the fence catches the late write.
        assert_eq!(forecast(0, -200_000, None), decided(2, false));
    }

    #[test]
    fn a_stale_write_between_b_s_takeover_and_b_s_first_write_is_forecast_as_a_double_debit() {
        // 10% slow: A's step-5 write lands about 3 s after B took over, before B writes.
        assert_eq!(forecast(0, -100_000, None).double_debit, Some(true));
    }

    #[test]
    fn with_the_margin_every_step_in_range_and_real_drift_leaves_one_holder() {
        for offset in (-MAX_OFFSET_MS..=MAX_OFFSET_MS).step_by(250) {
            for drift in [-REAL_DRIFT_PPM, 0, REAL_DRIFT_PPM] {
                let f = forecast(offset, drift, Some(MARGIN_MS));
                assert_eq!(f.holders, Some(1), "offset {offset} drift {drift}: {f:?}");
                assert_eq!(f.double_debit, Some(false), "offset {offset} drift {drift}");
            }
        }
    }
}
