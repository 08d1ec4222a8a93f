//! `row-lock-modes`: every combination of modes waits exactly as PostgreSQL's conflict table
//! says, and no two holders ever hold conflicting modes.

use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest};
use serde_json::json;

const MODES: [&str; 7] = [
    "read",
    "key-share",
    "share",
    "no-key-update",
    "update",
    "update-name",
    "insert-child",
];

fn request(t1: &str, t2: &str, t3: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    for (k, v) in [("t1", t1), ("t2", t2), ("t3", t3)] {
        params.insert(k.to_string(), v.to_string());
    }
    RunRequest {
        scenario: "row-lock-modes".to_string(),
        params,
        seed,
        actions: vec![],
    }
}

#[test]
fn every_combination_of_modes_meets_its_expectation() {
    for t1 in MODES {
        for t2 in MODES {
            for t3 in MODES.iter().copied().chain(["none"]) {
                let req = request(t1, t2, t3, 7);
                let trace = run(&req, Limits::default(), Recording::Summary).unwrap();
                let miss = expectation_for(&req).unwrap().mismatches(&trace);
                assert!(miss.is_empty(), "{t1} {t2} {t3}: {miss:?}");
            }
        }
    }
}

fn waited(t1: &str, t2: &str) -> bool {
    let trace = run(&request(t1, t2, "none", 1), Limits::default(), Recording::Summary).unwrap();
    trace.outcome["txn_2_waited"] == json!(true)
}

#[test]
fn the_foreign_key_check_waits_only_for_for_update() {
    assert!(
        !waited("update-name", "insert-child"),
        "NO KEY UPDATE lets the child insert through"
    );
    assert!(!waited("share", "insert-child"));
    assert!(
        waited("update", "insert-child"),
        "FOR UPDATE blocks even FOR KEY SHARE"
    );
}

#[test]
fn plain_reads_never_wait_and_are_never_waited_for() {
    for m in MODES {
        assert!(!waited(m, "read"), "{m} then read");
        assert!(!waited("read", m), "read then {m}");
    }
}

#[test]
fn share_locks_share_and_update_locks_do_not() {
    assert!(!waited("share", "share"));
    assert!(waited("share", "no-key-update"));
    assert!(waited("no-key-update", "no-key-update"));
    assert!(!waited("key-share", "no-key-update"));
}

fn lines(t1: &str, t2: &str, t3: &str) -> coordlab_sim::Trace {
    run(&request(t1, t2, t3, 1), Limits::default(), Recording::Lines).unwrap()
}

fn beat_text(t: &coordlab_sim::Trace, key: &str) -> String {
    t.beats.iter().find(|b| b.key == key).unwrap().text.clone()
}

/// The state panel shows PostgreSQL's 4×4 table, read from the one the simulator decides with.
#[test]
fn the_state_panel_shows_the_conflict_table_the_simulator_uses() {
    use coordlab_sim::protocols::database::row_locks::{LockMode, CONFLICTS};
    let req = request("update-name", "insert-child", "none", 1);
    let t = run(&req, Limits::default(), Recording::Full).unwrap();
    let snap = t.entries.last().unwrap().snapshot.as_ref().unwrap();
    let table = snap
        .tables
        .iter()
        .find(|t| t.title == "row-lock conflicts (PostgreSQL)")
        .expect("the conflict table");
    assert_eq!(
        table.columns[1..],
        ["KEY SHARE", "SHARE", "NO KEY UPDATE", "UPDATE"]
    );
    for (i, held) in LockMode::ALL.into_iter().enumerate() {
        assert_eq!(table.rows[i][0], held.sql().trim_start_matches("FOR "));
        for (j, requested) in LockMode::ALL.into_iter().enumerate() {
            let want = if CONFLICTS[i][j] { "waits" } else { "ok" };
            assert_eq!(table.rows[i][j + 1], want, "{held} then {requested}");
        }
    }
    // FOR KEY SHARE row: only FOR UPDATE waits.
    assert_eq!(table.rows[0][1..], ["ok", "ok", "ok", "waits"]);
}

/// Why each lock is taken, and where PostgreSQL and the curriculum's InnoDB part ways.
#[test]
fn the_foreign_key_check_is_narrated_and_set_against_innodb() {
    let t = lines("update-name", "insert-child", "none");
    let notes: Vec<&String> = t.entries.iter().flat_map(|e| &e.notes).collect();
    assert!(notes
        .iter()
        .any(|n| n
            .contains("txn-2 now holds customers#1 FOR KEY SHARE: the order's foreign-key check takes it")));
    assert!(notes
        .iter()
        .any(|n| n.contains("FOR NO KEY UPDATE: what an UPDATE that changes no key column takes")));
    let second = beat_text(&t, "second");
    assert!(second.contains("No conflict with transaction 1"), "{second}");
    assert!(
        second.contains("InnoDB differs: its check takes a shared lock that any update of the parent blocks"),
        "{second}"
    );
    assert!(second.contains("only FOR UPDATE (a delete, a key change) blocks it"));
    // Without a child insert there is nothing to reconcile.
    assert!(!beat_text(&lines("share", "update", "none"), "second").contains("InnoDB"));
    // The check waits behind FOR UPDATE, and the beat says so.
    assert!(beat_text(&lines("update", "insert-child", "none"), "second")
        .contains("It conflicts with transaction 1's lock, so it waits."));
}

/// Where an UPDATE waits, the narration says what FOR NO KEY UPDATE is.
#[test]
fn a_wait_for_no_key_update_says_what_that_mode_is() {
    let t = lines("update-name", "update-name", "none");
    assert!(t.entries.iter().flat_map(|e| &e.notes).any(|n| n.contains(
        "txn-2's FOR NO KEY UPDATE (what an UPDATE that changes no key column takes) conflicts with it"
    )));
}

/// The first beat says a lock is held until commit only where one was taken.
#[test]
fn the_first_beat_says_a_plain_read_holds_nothing() {
    let read = beat_text(&lines("read", "update", "none"), "first");
    assert_eq!(read, "A plain SELECT takes no row lock: it reads a snapshot.");
    let update = beat_text(&lines("update-name", "update", "none"), "first");
    assert!(update.ends_with("Held until it commits."), "{update}");
    assert!(update.contains("FOR NO KEY UPDATE: what an UPDATE that changes no key column takes"));
}
