//! `lock-granularity` models InnoDB. At REPEATABLE READ with no index the update by e-mail
//! keeps a next-key lock on every row it scans and on the gap after the last, so support's
//! update of user 7 and its insert of user 9 both wait; at READ COMMITTED, or with a unique
//! index, billing keeps one record lock and nobody waits. The run says that this is InnoDB
//! and that PostgreSQL would not wait.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::trace::Trace;
use coordlab_sim::{run, Limits, Recording, RunRequest};
use serde_json::json;

const INDEX: [&str; 2] = ["no", "yes"];
const ISOLATION: [&str; 2] = ["repeatable-read", "read-committed"];
const OTHER: [&str; 2] = ["update", "insert"];

fn request(index: &str, isolation: &str, other: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("index".to_string(), index.to_string());
    params.insert("isolation".to_string(), isolation.to_string());
    params.insert("other".to_string(), other.to_string());
    RunRequest {
        scenario: "lock-granularity".to_string(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(index: &str, isolation: &str, other: &str) -> Trace {
    run(
        &request(index, isolation, other, 1),
        Limits::default(),
        Recording::Lines,
    )
    .unwrap()
}

fn beat_text(t: &Trace, key: &str) -> String {
    let beat = t
        .beats
        .iter()
        .find(|b| b.key == key)
        .unwrap_or_else(|| panic!("no beat {key}"));
    assert!(beat.seq.is_some(), "beat {key} never happened");
    beat.text.clone()
}

#[test]
fn every_variant_meets_its_expectation_for_every_seed() {
    for index in INDEX {
        for isolation in ISOLATION {
            for other in OTHER {
                for seed in 0..100 {
                    let req = request(index, isolation, other, seed);
                    let trace = run(&req, Limits::default(), Recording::Summary).unwrap();
                    let miss = expectation_for(&req).unwrap().mismatches(&trace);
                    assert!(
                        miss.is_empty(),
                        "index={index} isolation={isolation} other={other} seed={seed}: {miss:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn support_waits_only_at_repeatable_read_without_an_index() {
    for index in INDEX {
        for isolation in ISOLATION {
            for other in OTHER {
                let t = trace(index, isolation, other);
                let whole = index == "no" && isolation == "repeatable-read";
                let what = format!("index={index} isolation={isolation} other={other}");
                assert_eq!(t.outcome["support_waited"], json!(whole), "{what}");
                assert_eq!(t.outcome["gap_locked_by_billing"], json!(whole), "{what}");
                let rows = if whole { 8 } else { 1 };
                assert_eq!(t.outcome["rows_locked_by_billing"], json!(rows), "{what}");
            }
        }
    }
}

#[test]
fn an_insert_waits_for_the_gap_lock_at_repeatable_read_and_not_at_read_committed() {
    let rr = trace("no", "repeatable-read", "insert");
    let waited = rr.outcome["total_wait_ms"].as_u64().unwrap();
    assert!((80..=110).contains(&waited), "{waited}");
    let gap_wait = rr.entries.iter().flat_map(|e| &e.notes).any(|n| {
        n.contains("users#supremum is held by billing (X next-key lock)")
            && n.contains("support's X insert-intention lock")
    });
    assert!(
        gap_wait,
        "the insert waits for billing's lock on the gap after the last row"
    );
    let rc = trace("no", "read-committed", "insert");
    assert_eq!(rc.outcome["total_wait_ms"], json!(0));
    assert_eq!(rc.outcome["support_waited"], json!(false));
}

#[test]
fn without_the_index_support_waits_about_as_long_as_billing_holds_its_transaction() {
    let t = trace("no", "repeatable-read", "update");
    let waited = t.outcome["total_wait_ms"].as_u64().unwrap();
    assert!((80..=110).contains(&waited), "{waited}");
    let t = trace("yes", "repeatable-read", "update");
    assert_eq!(t.outcome["total_wait_ms"], json!(0));
}

#[test]
fn the_run_says_it_is_innodb_and_that_postgresql_would_not_wait() {
    for index in INDEX {
        for isolation in ISOLATION {
            for other in OTHER {
                let t = trace(index, isolation, other);
                assert!(
                    beat_text(&t, "billing-locks").starts_with("InnoDB"),
                    "{index} {isolation} {other}"
                );
            }
        }
    }
    assert!(
        beat_text(&trace("no", "repeatable-read", "update"), "support-waits")
            .contains("PostgreSQL would not wait here: it locks only the rows that match.")
    );
    assert!(
        beat_text(&trace("no", "repeatable-read", "insert"), "support-waits")
            .contains("PostgreSQL takes no gap locks and would not wait here.")
    );
    assert!(
        beat_text(&trace("no", "read-committed", "update"), "support-done")
            .contains("READ COMMITTED kept only the row that matched")
    );
}

/// InnoDB's own lock names, never PostgreSQL's row-lock modes, in the narration and tables.
#[test]
fn the_narration_and_tables_use_innodb_lock_names() {
    let t = trace("no", "repeatable-read", "update");
    let notes: Vec<&String> = t.entries.iter().flat_map(|e| &e.notes).collect();
    assert!(notes
        .iter()
        .any(|n| n.contains("next-key lock (the row and the gap before it)")));
    assert!(notes
        .iter()
        .any(|n| n.contains("users#7 is held by billing (X next-key lock)")));
    for other in OTHER {
        for isolation in ISOLATION {
            let req = request("no", isolation, other, 1);
            let full = run(&req, Limits::default(), Recording::Full).unwrap();
            for e in &full.entries {
                for n in &e.notes {
                    assert!(!n.contains("FOR "), "{n}");
                }
                let snap = e.snapshot.as_ref().unwrap();
                for table in &snap.tables {
                    for row in &table.rows {
                        for cell in row {
                            assert!(!cell.contains("FOR "), "{}: {cell}", table.title);
                        }
                    }
                }
            }
        }
    }
}

/// Through random crashes, pauses and held links: at READ COMMITTED support never waits for
/// billing, not even without the index, whether it updates or inserts; at REPEATABLE READ the
/// sweep finds the insert waiting for the gap.
#[test]
fn the_sweep_finds_waits_only_at_repeatable_read_without_an_index() {
    use coordlab_sim::sweep::sweep;
    let only = ["unrelated-update-never-waits".to_string()];
    for other in OTHER {
        let base = request("no", "read-committed", other, 0);
        let report = sweep(&base, 0..500, &only).unwrap();
        assert_eq!(report.runs, 500);
        assert!(report.findings.is_empty(), "{other}: {:?}", report.findings);
    }
    let base = request("no", "repeatable-read", "insert", 0);
    let report = sweep(&base, 0..500, &only).unwrap();
    let finding = &report.findings["unrelated-update-never-waits"];
    assert!(finding.violations > 50, "{}", finding.violations);
    let again = run(&finding.first, Limits::default(), Recording::Summary).unwrap();
    assert_eq!(again.outcome["support_waited"], json!(true));
}
