//! `scheduled-job-guard` (curriculum §7): ShedLock's pattern. Two instances of a service run
//! the same `@Scheduled` job every minute, by their own clocks; `@SchedulerLock` guards it with
//! the `shedlock` row `(name, lock_until, locked_at, locked_by)` in a JDBC table. Taking the
//! row: `UPDATE shedlock SET lock_until = :now + lockAtMostFor, locked_at = :now, locked_by =
//! :me WHERE name = :name AND lock_until <= :now`; finishing sets `lock_until` to
//! `max(:now, locked_at + lockAtLeastFor)`.
//!
//! `skew=none`: both fire together, one wins each minute. `skew=ahead`: app-2's clock runs
//! 20 s ahead, so it fires 20 s early. With `:now` from the database (`usingDbTime()`) its
//! 5 s run is over and the row free before app-1 fires, and app-1 runs the job again.
//! `lock_at_least_for_ms` above the skew keeps the row taken until app-1 has fired. With
//! `:now` from each instance's clock (ShedLock's default) app-2 stamps the row in its own
//! future, and app-1 finds it taken: one run, but only because the instance that is ahead
//! fired first. ShedLock assumes synchronized clocks and recommends `usingDbTime()`.
//!
//! `skew=jumps`: app-2 runs 2 s behind, so app-1 takes the first minute's row; at 61 s
//! app-2's clock is stepped `skew_ms` forward, after its scheduler planned its firing. With
//! application time its `:now` is past the `lock_until` app-1 set, and it runs the job while
//! app-1's run still holds the row: two runs at once. With `usingDbTime()` it skips.

use crate::json;
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::presentation::durations::{clock_text, seconds};
use crate::properties::PropertySpec;
use crate::protocols::services::shedlock::{
    InstanceConfig, ScheduledInstance, ShedDbDurable, ShedlockDb, BOOT_MS,
};
use crate::scenarios::common::always;
use crate::scenarios::lease_setup::{choice, holds_if, int, millis};
use crate::scenarios::{Expectation, Listing, ParamSpec, Params, VariantDefault};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

pub const ID: &str = "scheduled-job-guard";
/// The shedlock database and the two app instances, as the setup added them.
#[derive(Clone, Copy)]
struct ShedCast {
    db: NodeId,
    apps: [NodeId; 2],
}
const PERIOD_MS: u64 = 60_000;
const JOB_MS: u64 = 5_000;
const SCHEDULES: u32 = 3;
const WAKE_JITTER_MS: u64 = 300;
/// Each firing wakes up to [`WAKE_JITTER_MS`] late and the row changes hands through the
/// database: an instance firing early by a lead closer than this to how long the other holds
/// the row could find it taken or free. No prediction.
const LEAD_CLOSE_CALL_MS: u64 = 1_000;
/// The same for an instance's `:now` against the `lock_until` another set: closer than this,
/// the two firings' wake jitter decides.
const NOW_CLOSE_CALL_MS: u64 = 500;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a lock row let one instance run a @Scheduled job",
        "See an instance whose clock runs ahead fire early and the job run twice",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "Why does the job run twice?",
        answers: &[
            "The table has no unique key",
            "One instance's fast clock made it run and release before the other fired",
            "ShedLock does not lock",
        ],
        correct: 1,
        why: "The lock only covers overlapping runs; clocks that disagree make the runs not overlap.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§7",
        title: "ShedLock: one @Scheduled run",
        summary: "Every instance runs the same @Scheduled job; a row in a JDBC table lets one run per minute. An instance whose clock runs ahead fires early, finishes, and the other runs the job again.",
        params: vec![
            choice(
                "skew",
                "Clocks",
                "Whether app-2's clock runs ahead of app-1's.",
                &[
                    ("ahead", "app-2 runs ahead"),
                    ("none", "in step"),
                    ("jumps", "app-2's clock jumps ahead mid-run"),
                ],
            ),
            choice(
                "now",
                "Whose clock is :now",
                "The database's (usingDbTime(), which ShedLock's docs recommend) or each instance's own (the default).",
                &[("db", "the database's"), ("app", "each instance's")],
            ),
            ParamSpec {
                variant_defaults: &[
                    VariantDefault {
                        when: ("skew", "none"),
                        value: "0",
                    },
                    VariantDefault {
                        when: ("skew", "jumps"),
                        value: "25000",
                    },
                ],
                ..millis("skew_ms", "How far ahead", "How far app-2's clock runs ahead (jumps: the size of the step).", "20000", (0, 29_000))
            },
            millis("lock_at_least_for_ms", "lockAtLeastFor", "The row stays taken at least this long after it is locked. ShedLock refuses a value above lockAtMostFor.", "0", (0, 55_000)),
            ParamSpec {
                variant_defaults: &[VariantDefault {
                    when: ("skew", "jumps"),
                    value: "15000",
                }],
                ..millis("lock_at_most_for_ms", "lockAtMostFor", "The row frees itself this long after it is locked, if nobody unlocks.", "50000", (10_000, 59_000))
            },
        ],
    }
}

/// With `skew=jumps`: app-2 starts this far behind, so app-1 takes the first row.
const BEHIND_MS: u64 = 2_000;
/// And its clock is stepped forward at this time, after app-1 took the row and as app-2
/// fires (at 61 s plus its wake jitter: see `forecast`).
const JUMP_AT_MS: u64 = 61_000;

fn skew_choice(params: &Params) -> &str {
    params.get("skew").map_or("ahead", String::as_str)
}

/// A moment against a deadline: `after` where `at_ms` is past `until_ms` by more than
/// `close_ms`, `before` where it is that far short of it, nothing where the firings' wake
/// jitter decides.
fn compare(at_ms: u64, until_ms: u64, close_ms: u64, after: u32, before: u32) -> Option<u32> {
    if at_ms > until_ms + close_ms {
        Some(after)
    } else if at_ms + close_ms < until_ms {
        Some(before)
    } else {
        None
    }
}

/// Runs for one schedule when an instance fires `early_ms` before the other, `:now` from the
/// database: 1, 2, or unknown near the edge.
fn early_runs(early_ms: u64, params: &Params) -> Option<u32> {
    let at_least: u64 = int(params, "lock_at_least_for_ms");
    let held = JOB_MS.max(at_least);
    match early_ms {
        0 => Some(1),
        _ => compare(early_ms, held, LEAD_CLOSE_CALL_MS, 2, 1),
    }
}

/// Whether ShedLock refuses the settings: it will not keep a row taken for longer than it lets
/// a holder keep it.
fn refused(params: &Params) -> bool {
    int::<u64>(params, "lock_at_least_for_ms") > int::<u64>(params, "lock_at_most_for_ms")
}

/// The runs of each schedule (1, 2, …), where the same for every seed, and whether two runs
/// overlap in time.
fn forecast(params: &Params) -> Option<(Vec<u32>, bool)> {
    if refused(params) {
        return Some((vec![0; SCHEDULES as usize], false));
    }
    let skew: u64 = int(params, "skew_ms");
    let app_time = params.get("now").is_some_and(|v| v == "app");
    match skew_choice(params) {
        "jumps" => {
            let at_most: u64 = int(params, "lock_at_most_for_ms");
            if app_time {
                // app-2's scheduler armed at boot (1 s) while its clock, stepped 2 s back,
                // still read zero, so it fires 60 s later, at 61 s, just after the jump: its
                // :now reads 59 s + skew, against app-1's lock_until of 60 s + lockAtMostFor.
                let app2_now = BOOT_MS + PERIOD_MS - BEHIND_MS + skew;
                let first = compare(app2_now, PERIOD_MS + at_most, NOW_CLOSE_CALL_MS, 2, 1)?;
                // Where app-2 ran too, it finished by leaving the row taken until that :now
                // plus the longer of its run and lockAtLeastFor. Both instances fire the
                // second schedule at 120 s by their clocks: while the row is still taken,
                // neither runs.
                let at_least: u64 = int(params, "lock_at_least_for_ms");
                let second = match first {
                    2 => compare(
                        2 * PERIOD_MS,
                        app2_now + JOB_MS.max(at_least),
                        NOW_CLOSE_CALL_MS,
                        1,
                        0,
                    )?,
                    _ => 1,
                };
                Some((vec![first, second, 1], first == 2))
            } else {
                let later = early_runs(skew.saturating_sub(BEHIND_MS), params)?;
                Some((vec![1, later, later], false))
            }
        }
        "none" => Some((vec![1; SCHEDULES as usize], false)),
        _ if app_time => Some((vec![1; SCHEDULES as usize], false)),
        _ => {
            let n = early_runs(skew, params)?;
            Some((vec![n; SCHEDULES as usize], false))
        }
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let mut outcome = Vec::new();
    let mut verdicts = Vec::new();
    if let Some((runs, overlap)) = forecast(params) {
        let max = runs.iter().copied().max().unwrap_or(0);
        outcome.push(("max_runs_per_schedule".to_string(), json!(max)));
        outcome.push(("runs".to_string(), json!(runs.iter().sum::<u32>())));
        verdicts.push(("one-run-per-schedule".to_string(), holds_if(max <= 1)));
        verdicts.push(("one-run-at-a-time".to_string(), holds_if(!overlap)));
    }
    Expectation { outcome, verdicts }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let app_time = params.get("now").is_some_and(|v| v == "app");
    let db = setup.add::<ShedlockDb>(
        "postgres",
        "database",
        &[FaultKind::Pause, FaultKind::Network],
        (),
        ShedlockDb::initial(),
    );
    let config = InstanceConfig {
        db,
        period_ms: PERIOD_MS,
        job_ms: JOB_MS,
        at_most_ms: int(params, "lock_at_most_for_ms"),
        at_least_ms: int(params, "lock_at_least_for_ms"),
        app_time,
        last_slot: SCHEDULES,
        wake_jitter_ms: WAKE_JITTER_MS,
    };
    let apps = ["app-1", "app-2"].map(|name| {
        setup.add::<ScheduledInstance>(
            name,
            "worker",
            &crate::scenarios::common::WORKER_FAULTS,
            config.clone(),
            (),
        )
    });
    let cast = ShedCast { db, apps };
    let [_, app2] = apps;
    let skew: i64 = match skew_choice(params) {
        "none" => 0,
        _ => int(params, "skew_ms"),
    };
    let jumps = skew_choice(params) == "jumps";
    if jumps {
        setup.script(
            500 * MS_US,
            Fault::ClockJump {
                node: app2,
                delta_ms: -(BEHIND_MS as i64),
            },
        );
        setup.script(
            JUMP_AT_MS * MS_US,
            Fault::ClockJump {
                node: app2,
                delta_ms: skew,
            },
        );
    } else if skew != 0 {
        setup.script(
            500 * MS_US,
            Fault::ClockJump {
                node: app2,
                delta_ms: skew,
            },
        );
    }
    setup.set_world(ShedWorld(cast));
    if refused(params) {
        setup.beat(
            "refused",
            "ShedLock refuses the lock's settings",
            "lockAtLeastFor is longer than lockAtMostFor: ShedLock throws at every firing, and the job never runs. Set lockAtLeastFor at most lockAtMostFor.",
            move |n, _| {
                cast.apps
                    .iter()
                    .any(|&app| n.live::<ScheduledInstance>(app).is_some_and(|i| i.refused))
            },
        );
    } else if jumps {
        jump_beats(&mut setup, params, skew as u64, cast);
    } else {
        beats(&mut setup, params, skew as u64, cast);
    }
    setup
}

fn table<'a>(nodes: &Nodes<'a>, cast: ShedCast) -> Option<&'a ShedDbDurable> {
    nodes
        .live::<ShedlockDb>(cast.db)
        .map(|d| &d.durable)
        .or_else(|| nodes.durable::<ShedlockDb>(cast.db))
}

/// How many instances are running the job now (a paused one still is).
fn running(nodes: &Nodes<'_>, cast: ShedCast) -> usize {
    cast.apps
        .iter()
        .filter(|i| {
            nodes
                .live::<ScheduledInstance>(**i)
                .is_some_and(|a| a.running.is_some())
        })
        .count()
}

fn max_runs(d: &ShedDbDurable) -> u32 {
    (1..=SCHEDULES).map(|s| ShedlockDb::runs(d, s)).max().unwrap_or(0)
}

struct ShedWorld(ShedCast);

impl World for ShedWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![
            always(
                "one-run-per-schedule",
                "The job runs at most once for each firing of the schedule, across all instances.",
            ),
            always(
                "one-run-at-a-time",
                "At most one instance runs the job at any moment: ShedLock's own promise.",
            ),
        ]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        out.push(table(nodes, self.0).is_none_or(|d| max_runs(d) <= 1));
        out.push(running(nodes, self.0) <= 1);
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let Some(d) = table(nodes, self.0) else {
            return Vec::new();
        };
        let row = &d.row;
        vec![
            TableView {
                title: "shedlock".into(),
                columns: columns(&["name", "lock_until", "locked_at", "locked_by"]),
                rows: vec![vec![
                    "nightly-report".into(),
                    clock_text(row.lock_until_us),
                    clock_text(row.locked_at_us),
                    row.locked_by
                        .map_or("—".to_string(), |n| nodes.name(n).to_string()),
                ]],
            },
            TableView {
                title: "Reports written".into(),
                columns: columns(&["schedule", "by"]),
                rows: d
                    .reports
                    .iter()
                    .map(|r| vec![r.slot.to_string(), nodes.name(r.by).to_string()])
                    .collect(),
            },
        ]
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        if let Some(d) = table(nodes, self.0) {
            out.insert("runs".into(), json!(d.reports.len()));
            out.insert("max_runs_per_schedule".into(), json!(max_runs(d)));
        }
        out
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        if running(nodes, self.0) > 1 {
            return Some("Two instances are running the job at once".to_string());
        }
        table(nodes, self.0)
            .filter(|d| max_runs(d) > 1)
            .map(|_| "The job has run twice for one schedule".to_string())
    }
}

fn reports(n: &Nodes<'_>, cast: ShedCast) -> usize {
    table(n, cast).map_or(0, |d| d.reports.len())
}

fn beats(setup: &mut Setup, params: &Params, skew_ms: u64, cast: ShedCast) {
    let expected = forecast(params).map(|(runs, _)| runs[0]);
    let app_time = params.get("now").is_some_and(|v| v == "app");
    if skew_ms > 0 {
        setup.beat(
            "skewed",
            "app-2's clock runs ahead",
            &format!("app-2's clock reads {} later than app-1's. Its scheduler fires by that clock, so every minute it fires first.", seconds(skew_ms)),
            |_, step| matches!(step.fault, Some(Fault::ClockJump { .. })),
        );
    }
    setup.beat(
        "first-lock",
        "An instance takes the shedlock row",
        "The schedule fires and the instance runs the conditional UPDATE. One row updated: this run is its.",
        move |n, _| table(n, cast).is_some_and(|d| d.row.locked_by.is_some()),
    );
    setup.beat(
        "first-run",
        "The job runs and unlocks",
        "The job writes its report and sets lock_until to max(now, locked_at + lockAtLeastFor).",
        move |n, _| reports(n, cast) >= 1,
    );
    match expected {
        Some(2) => {
            setup
                .beat(
                    "app-1-fires",
                    "app-1's schedule fires",
                    "app-1 fires on its own clock, after app-2's run has finished and unlocked.",
                    move |_, step| step.acted(cast.apps[0]) && step.kind == crate::trace::EventKind::Timer,
                )
                .ask(
                    "Does app-1 run the job again?",
                    &["Yes: lock_until is already past", "No: the row shows this minute's run"],
                    0,
                    "The row says when it is free, not which schedule ran. By the database's clock app-2's run ended before app-1 fired.",
                );
            setup.beat(
                "twice",
                "The job runs twice for one schedule",
                "app-1's UPDATE matches: lock_until is before the database's now. A second report for the same minute. lockAtLeastFor longer than the skew would have kept the row taken.",
                move |n, _| table(n, cast).is_some_and(|d| max_runs(d) > 1),
            );
        }
        Some(_) => {
            let why = if app_time && skew_ms > 0 {
                "app-1 compares lock_until, written by app-2's clock, with its own reading: app-2's was ahead, so the row is still taken. One run, only because the instance ahead fired first. ShedLock assumes synced clocks and recommends usingDbTime(): an instance ahead of a running holder would see its lock as expired (skew=jumps)."
            } else if skew_ms > 0 && skew_ms < JOB_MS {
                "app-2's run is still going when app-1 fires (the job takes 5 s), so lock_until is still app-2's lockAtMostFor deadline: the row is taken."
            } else if skew_ms > 0 {
                "lockAtLeastFor kept lock_until past the moment app-1 fires: the row is still taken."
            } else {
                "Both fired together; the second UPDATE finds lock_until in the future and matches no row."
            };
            setup.beat("skipped", "The other instance skips the run", why, |_, step| {
                step.notes.iter().any(|n| n.contains("skips this run"))
            });
        }
        None => {}
    }
    setup.beat(
        "three",
        "Three schedules later",
        "Count the reports: one per schedule is what ShedLock promises when the clocks agree closely enough.",
        move |n, _| table(n, cast).is_some_and(|d| (1..=SCHEDULES).all(|s| ShedlockDb::runs(d, s) >= 1)),
    );
}

/// `skew=jumps`: app-2's clock is stepped forward after app-1 took the row.
fn jump_beats(setup: &mut Setup, params: &Params, skew_ms: u64, cast: ShedCast) {
    let app_time = params.get("now").is_some_and(|v| v == "app");
    let steals = forecast(params).is_some_and(|(_, overlap)| overlap);
    let at_most: u64 = int(params, "lock_at_most_for_ms");
    setup.beat(
        "first-lock",
        "app-1 takes the shedlock row",
        &format!("app-2's clock runs 2 s behind, so app-1 fires first and locks the row until its now + lockAtMostFor ({}). Its 5 s run starts.", seconds(at_most)),
        move |n, _| table(n, cast).is_some_and(|d| d.row.locked_by == Some(cast.apps[0])),
    );
    setup
        .beat(
            "clock-jumps",
            "app-2's clock jumps ahead",
            &format!("At 61 s app-2's clock is stepped {} forward (a bad time source, a restored VM). Its scheduler fires when it planned, a second later, but :now reads the new clock.", seconds(skew_ms)),
            |_, step| matches!(step.fault, Some(Fault::ClockJump { delta_ms, .. }) if *delta_ms > 0),
        )
        .ask(
            "app-2 fires while app-1's run holds the row. Does it skip?",
            &["Yes: the row is taken", "No: by its :now, lock_until has passed"],
            u8::from(steals),
            if app_time {
                "lock_until was set by app-1's clock; app-2 compares it with its own, which is now far ahead."
            } else {
                "With usingDbTime() both sides of the comparison are the database's clock."
            },
        );
    if steals {
        setup.beat(
            "two-at-once",
            "Two runs at once",
            "app-2's UPDATE matches: by its clock lock_until has passed, yet app-1 is mid-run. ShedLock's promise, at most one run at a time, rests on synced clocks; usingDbTime() keeps it.",
            move |n, _| running(n, cast) > 1,
        );
    } else {
        let why = if app_time {
            "lockAtMostFor is longer than the jump: app-2's :now is still before lock_until, so it skips."
        } else {
            "With usingDbTime() :now is the database's: app-1's row is still taken, so app-2 skips. It still fires early from now on, so a later minute can run twice unless lockAtLeastFor covers the skew."
        };
        setup.beat("skipped", "app-2 skips the run", why, |_, step| {
            step.notes.iter().any(|n| n.contains("skips this run"))
        });
    }
    setup.beat(
        "three",
        "Three schedules later",
        "Count the reports and when they ran: ShedLock holds its promise only as well as the clocks it compares agree.",
        move |n, _| table(n, cast).is_some_and(|d| (1..=SCHEDULES).all(|s| ShedlockDb::runs(d, s) >= 1)),
    );
}
