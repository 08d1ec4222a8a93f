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
//! future, and app-1 finds it taken.

use super::lease_setup::{choice, holds_if, int, millis};
use super::{Expectation, ParamSpec, Params, ScenarioInfo, VariantDefault};
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::{Nodes, World};
use crate::properties::{PropertyKind, PropertySpec};
use crate::protocols::lease_msg::seconds;
use crate::protocols::shedlock::{clock_text, InstanceConfig, ScheduledInstance, ShedDbDurable, ShedlockDb};
use crate::trace::{columns, TableView};
use serde_json::json;
use std::collections::BTreeMap;

pub const ID: &str = "scheduled-job-guard";
const DB: NodeId = NodeId(0);
const APP1: NodeId = NodeId(1);
const APP2: NodeId = NodeId(2);
const PERIOD_MS: u64 = 60_000;
const JOB_MS: u64 = 5_000;
const SCHEDULES: u32 = 3;
const WAKE_JITTER_MS: u64 = 300;

pub fn info() -> ScenarioInfo {
    ScenarioInfo {
        id: ID,
        chapter: 6,
        sections: "§7",
        title: "ShedLock: one @Scheduled run",
        summary: "Every instance runs the same @Scheduled job; a row in a JDBC table lets one run per minute. An instance whose clock runs ahead fires early, finishes, and the other runs the job again.",
        params: vec![
            choice(
                "skew",
                "Clocks",
                "Whether app-2's clock runs ahead of app-1's.",
                &[("ahead", "app-2 runs ahead"), ("none", "in step")],
            ),
            choice(
                "now",
                "Whose clock is :now",
                "The database's (usingDbTime()) or each instance's own (ShedLock's default).",
                &[("db", "the database's"), ("app", "each instance's")],
            ),
            ParamSpec {
                variant_defaults: &[VariantDefault {
                    when: ("skew", "none"),
                    value: "0",
                }],
                ..millis("skew_ms", "How far ahead", "How far app-2's clock runs ahead.", "20000", (0, 29_000))
            },
            millis("lock_at_least_for_ms", "lockAtLeastFor", "The row stays taken at least this long after it is locked.", "0", (0, 55_000)),
            millis("lock_at_most_for_ms", "lockAtMostFor", "The row frees itself this long after it is locked, if nobody unlocks.", "50000", (10_000, 59_000)),
        ],
    }
}

/// The runs each schedule gets, where the same for every seed: 1, 2 or unknown.
fn runs_per_schedule(params: &Params) -> Option<u32> {
    let skew: u64 = if params.get("skew").is_some_and(|v| v == "ahead") {
        int(params, "skew_ms")
    } else {
        0
    };
    let at_least: u64 = int(params, "lock_at_least_for_ms");
    let app_time = params.get("now").is_some_and(|v| v == "app");
    if app_time || skew == 0 {
        // The later instance's :now at firing is never past the row the earlier one left
        // (within the scheduler's wake jitter, well under the job's length).
        return Some(1);
    }
    let held = JOB_MS.max(at_least);
    if skew > held + 1_000 {
        Some(2)
    } else if skew + 1_000 < held {
        Some(1)
    } else {
        None
    }
}

pub fn expectation(params: &Params) -> Expectation {
    let mut outcome = Vec::new();
    let mut verdicts = Vec::new();
    if let Some(n) = runs_per_schedule(params) {
        outcome.push(("max_runs_per_schedule".to_string(), json!(n)));
        outcome.push(("runs".to_string(), json!(n * SCHEDULES)));
        verdicts.push(("one-run-per-schedule".to_string(), holds_if(n == 1)));
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
    debug_assert_eq!(db, DB);
    let config = InstanceConfig {
        db: DB,
        period_ms: PERIOD_MS,
        job_ms: JOB_MS,
        at_most_ms: int(params, "lock_at_most_for_ms"),
        at_least_ms: int(params, "lock_at_least_for_ms"),
        app_time,
        last_slot: SCHEDULES,
        wake_jitter_ms: WAKE_JITTER_MS,
    };
    for name in ["app-1", "app-2"] {
        setup.add::<ScheduledInstance>(name, "worker", &super::common::WORKER_FAULTS, config.clone(), ());
    }
    let skew: i64 = if params.get("skew").is_some_and(|v| v == "ahead") {
        int(params, "skew_ms")
    } else {
        0
    };
    if skew != 0 {
        setup.script(
            500 * MS_US,
            Fault::ClockJump {
                node: APP2,
                delta_ms: skew,
            },
        );
    }
    setup.set_world(ShedWorld);
    beats(&mut setup, params, skew as u64);
    setup
}

fn table<'a>(nodes: &Nodes<'a>) -> Option<&'a ShedDbDurable> {
    nodes
        .live::<ShedlockDb>(DB)
        .map(|d| &d.durable)
        .or_else(|| nodes.durable::<ShedlockDb>(DB))
}

fn max_runs(d: &ShedDbDurable) -> u32 {
    (1..=SCHEDULES).map(|s| ShedlockDb::runs(d, s)).max().unwrap_or(0)
}

struct ShedWorld;

impl World for ShedWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        vec![PropertySpec {
            name: "one-run-per-schedule",
            kind: PropertyKind::Always,
            description: "The job runs at most once for each firing of the schedule, across all instances.",
        }]
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        out.push(table(nodes).is_none_or(|d| max_runs(d) <= 1));
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let Some(d) = table(nodes) else {
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
        if let Some(d) = table(nodes) {
            out.insert("runs".into(), json!(d.reports.len()));
            out.insert("max_runs_per_schedule".into(), json!(max_runs(d)));
        }
        out
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        table(nodes)
            .filter(|d| max_runs(d) > 1)
            .map(|_| "The job has run twice for one schedule".to_string())
    }
}

fn reports(n: &Nodes<'_>) -> usize {
    table(n).map_or(0, |d| d.reports.len())
}

fn beats(setup: &mut Setup, params: &Params, skew_ms: u64) {
    let expected = runs_per_schedule(params);
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
        |n, _| table(n).is_some_and(|d| d.row.locked_by.is_some()),
    );
    setup.beat(
        "first-run",
        "The job runs and unlocks",
        "The job writes its report and sets lock_until to max(now, locked_at + lockAtLeastFor).",
        |n, _| reports(n) >= 1,
    );
    match expected {
        Some(2) => {
            setup
                .beat(
                    "app-1-fires",
                    "app-1's schedule fires",
                    "app-1 fires on its own clock, after app-2's run has finished and unlocked.",
                    |_, step| step.acted(APP1) && step.kind == crate::trace::EventKind::Timer,
                )
                .ask(
                    "Does app-1 run the job again?",
                    &["No: the row shows this minute's run", "Yes: lock_until is already past"],
                    1,
                    "The row says when it is free, not which schedule ran. By the database's clock app-2's run ended before app-1 fired.",
                );
            setup.beat(
                "twice",
                "The job runs twice for one schedule",
                "app-1's UPDATE matches: lock_until is before the database's now. A second report for the same minute. lockAtLeastFor longer than the skew would have kept the row taken.",
                |n, _| table(n).is_some_and(|d| max_runs(d) > 1),
            );
        }
        Some(_) => {
            let why = if app_time && skew_ms > 0 {
                "app-1 compares lock_until, written by app-2's clock, with its own reading: app-2's reading was ahead, so the row is still taken."
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
        |n, _| table(n).is_some_and(|d| (1..=SCHEDULES).all(|s| ShedlockDb::runs(d, s) >= 1)),
    );
}
