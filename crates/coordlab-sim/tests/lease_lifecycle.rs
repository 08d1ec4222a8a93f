//! `lease-lifecycle`: every renewal rule and release reaches its declared outcome for many
//! seeds; the correct rule shows the whole life of a lease, the buggy one makes a worker's own
//! write bounce off its own newer token; a release that deletes the row restarts the token
//! counter at 1, and expiring the row or a sequence per name keeps it growing.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

fn request(renewal: &str, seed: u64) -> RunRequest {
    with_release(renewal, "expire", seed)
}

fn with_release(renewal: &str, release: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("renewal".to_string(), renewal.to_string());
    params.insert("release".to_string(), release.to_string());
    RunRequest {
        scenario: "lease-lifecycle".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(renewal: &str, seed: u64) -> Trace {
    run(&request(renewal, seed), Limits::default(), Recording::Lines).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

/// The index of the first entry whose line or narration contains `needle`.
fn first(t: &Trace, needle: &str) -> usize {
    t.entries
        .iter()
        .position(|e| e.text.contains(needle) || e.notes.iter().any(|n| n.contains(needle)))
        .unwrap_or_else(|| panic!("no entry mentions {needle:?}"))
}

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    for renewal in ["keeps-token", "increments-token"] {
        for release in ["expire", "delete", "sequence"] {
            for seed in 0..200 {
                let req = with_release(renewal, release, seed);
                let t = run(&req, Limits::default(), Recording::Summary).unwrap();
                let miss = expectation_for(&req).unwrap().mismatches(&t);
                assert!(
                    miss.is_empty(),
                    "renewal={renewal} release={release} seed={seed}: {miss:?}"
                );
            }
        }
    }
}

#[test]
fn the_lease_is_acquired_renewed_lost_taken_over_released_and_acquired_afresh_in_that_order() {
    for seed in [1, 7, 42] {
        let t = trace("keeps-token", seed);
        let steps = [
            first(&t, "the row starts at fence_token 1"),
            first(
                &t,
                "worker-A already owns account-42: lease.owner = 'worker-A', so the CASE keeps token 1",
            ),
            first(&t, "worker-A crashes"),
            first(&t, "worker-B asks for account-42, but worker-A holds it"),
            first(&t, "worker-A's lease on account-42 (token 1) has expired"),
            first(
                &t,
                "worker-B takes it over and the CASE adds 1: token 1 becomes 2",
            ),
            first(&t, "worker-B takes over the job at step 2"),
            first(&t, "worker-B releases account-42 by setting expires_at = now()"),
            first(&t, "worker-A restarts"),
            first(&t, "the CASE adds 1: token 2 becomes 3"),
            first(&t, "The job is already complete"),
        ];
        assert!(
            steps.windows(2).all(|w| w[0] < w[1]),
            "seed {seed}: out of order {steps:?}"
        );
        // The clean release checks the owner, and expires the row rather than deleting it.
        let release = &t.entries[steps[7]];
        assert_eq!(
            release.text,
            "worker-B -> lease-store: release account-42 WHERE owner = me"
        );
        assert!(release.notes.iter().any(|n| n
            == "UPDATE lease SET expires_at = now() WHERE name = 'account-42' AND owner = 'worker-B' → UPDATE 1"));
        // The acquisition statement is narrated with its values bound when it runs.
        let insert = &t.entries[steps[0]];
        assert!(insert.notes[0].starts_with(
            "INSERT INTO lease (name, owner, fence_token, acquired_at, expires_at) VALUES ('account-42', 'worker-A', 1, now(), now() + interval '9 s') ON CONFLICT (name) DO UPDATE SET owner = 'worker-A', fence_token = CASE WHEN lease.owner = 'worker-A' THEN lease.fence_token ELSE lease.fence_token + 1 END"
        ), "{:?}", insert.notes);
        assert!(insert.notes[0].ends_with("RETURNING fence_token → 1"));
        assert_eq!(t.outcome["rejected_writes"], json!([]));
    }
}

#[test]
fn with_increments_token_the_workers_own_write_is_rejected_by_its_own_renewal() {
    for seed in [1, 7, 42] {
        let t = trace("increments-token", seed);
        let rejected = t.outcome["rejected_writes"].as_array().unwrap();
        assert_eq!(
            rejected[0],
            json!({"worker": "worker-A", "token": 1, "step": 1, "reason": "token 1 < 2: a newer holder exists"})
        );
        // The token that beat it is A's own: the second grant is A's renewal, and nobody else
        // was granted anything before A's write bounced.
        let grants = t.outcome["grants"].as_array().unwrap();
        assert_eq!(
            grants[1],
            json!({"worker": "worker-A", "token": 2, "kind": "renewal"})
        );
        let bounced = first(&t, "ledger -> worker-A: step 1: UPDATE 0 (rejected)");
        let b_granted = first(&t, "lease-store -> worker-B: granted");
        assert!(bounced < b_granted, "seed {seed}");
        assert!(
            t.entries[bounced]
                .notes
                .iter()
                .any(|n| n.contains("fenced itself out")),
            "seed {seed}: {:?}",
            t.entries[bounced].notes
        );
        assert_eq!(verdict(&t, "tokens-increase"), Verdict::Violated);
        assert_eq!(
            verdict(&t, "fence-monotonic"),
            Verdict::Holds,
            "the ledger did its job"
        );
        assert_eq!(verdict(&t, "job-completes"), Verdict::Violated);
    }
}

#[test]
fn keeping_the_token_lets_the_same_heartbeat_pattern_complete_the_job() {
    let t = trace("keeps-token", 3);
    let grants = t.outcome["grants"].as_array().unwrap();
    assert!(grants.iter().filter(|g| g["kind"] == "renewal").all(|g| {
        let holder_token = if g["worker"] == "worker-A" { 1 } else { 2 };
        g["token"] == holder_token
    }));
    assert_eq!(t.outcome["balance"], json!(80));
    assert_eq!(verdict(&t, "job-completes"), Verdict::Holds);
}

#[test]
fn every_step_is_narrated() {
    for renewal in ["keeps-token", "increments-token"] {
        for seed in 0..20 {
            let t = trace(renewal, seed);
            assert!(!t
                .entries
                .iter()
                .any(|e| e.notes.iter().any(|n| n.contains("token 0"))));
            let silent: Vec<String> = t
                .entries
                .iter()
                .filter(|e| e.notes.is_empty())
                .map(|e| e.line())
                .collect();
            assert!(silent.is_empty(), "renewal={renewal} seed={seed}: {silent:#?}");
        }
    }
}

/// Token of the last grant (A's fresh acquisition after B's release).
fn last_grant_token(t: &Trace) -> u64 {
    t.outcome["grants"].as_array().unwrap().last().unwrap()["token"]
        .as_u64()
        .unwrap()
}

#[test]
fn a_release_that_deletes_the_row_restarts_the_counter_below_what_the_ledger_has_seen() {
    for seed in [1, 7, 42] {
        let t = run(
            &with_release("keeps-token", "delete", seed),
            Limits::default(),
            Recording::Lines,
        )
        .unwrap();
        assert_eq!(last_grant_token(&t), 1, "seed {seed}");
        assert_eq!(verdict(&t, "tokens-increase"), Verdict::Violated);
        let deleted = first(&t, "the row is deleted, and its fence_token 2 with it");
        let restarted = first(&t, "Token 2 was handed out for account-42 before");
        assert!(deleted < restarted, "seed {seed}");
        assert!(t.entries[deleted]
            .notes
            .iter()
            .any(|n| n == "DELETE FROM lease WHERE name = 'account-42' AND owner = 'worker-B' → DELETE 1"));
    }
}

#[test]
fn expiring_the_row_or_a_sequence_per_name_keeps_the_counter_growing() {
    for (release, token) in [("expire", 3), ("sequence", 7)] {
        for seed in [1, 7, 42] {
            let t = run(
                &with_release("keeps-token", release, seed),
                Limits::default(),
                Recording::Lines,
            )
            .unwrap();
            assert_eq!(last_grant_token(&t), token, "{release} seed {seed}");
            assert_eq!(verdict(&t, "tokens-increase"), Verdict::Holds, "{release}");
        }
    }
    let t = run(
        &with_release("keeps-token", "sequence", 1),
        Limits::default(),
        Recording::Lines,
    )
    .unwrap();
    first(
        &t,
        "VALUES ('account-42', 'worker-A', nextval('fence_seq_account_42'), now()",
    );
}

#[test]
fn the_state_panel_shows_the_last_statement_with_its_values_bound() {
    let t = run(&request("keeps-token", 1), Limits::default(), Recording::Full).unwrap();
    let takeover = first(&t, "worker-B takes it over and the CASE adds 1");
    let snapshot = t.entries[takeover].snapshot.as_ref().expect("a full recording");
    let table = snapshot
        .tables
        .iter()
        .find(|t| t.title == "last statement on lease")
        .expect("the statement table");
    let text: Vec<&str> = table.rows.iter().map(|r| r[0].as_str()).collect();
    assert!(
        text.contains(&"VALUES ('account-42', 'worker-B', 1, now(), now() + interval '9 s')"),
        "{text:#?}"
    );
    assert!(
        text.contains(&" WHERE lease.expires_at < now() OR lease.owner = 'worker-B'"),
        "{text:#?}"
    );
    assert!(
        text.last()
            .unwrap()
            .starts_with("→ fence_token 2 (takeover) — now() = "),
        "{text:#?}"
    );
    // The ledger's writes table says "no token" only for writes without one; here all have one.
    let writes = snapshot.tables.iter().find(|t| t.title == "writes").unwrap();
    assert!(writes.rows.iter().all(|r| r[2] != "no token" && r[2] != "0"));
}

/// With the renewal bug and a DELETE release, B's fresh row starts at token 1 below the 2
/// that A's renewal left on the ledger: B is refused by A's mark, not by its own renewal, and
/// the narration says which. The takeover sentence names no CASE the statement lacks.
#[test]
fn a_refusal_is_blamed_on_whoever_raised_the_token() {
    let t = run(
        &with_release("increments-token", "delete", 1),
        Limits::default(),
        Recording::Lines,
    )
    .unwrap();
    let notes = crate::story::notes(&t);
    assert!(notes
        .iter()
        .any(|n| n.contains("The newer token is worker-A's own")));
    assert!(
        !notes
            .iter()
            .any(|n| n.contains("The newer token is worker-B's own")),
        "{notes:#?}"
    );
    assert!(notes
        .iter()
        .any(|n| n.starts_with("worker-B's write was refused") && n.contains("reads that as proof")));
    let t = trace("increments-token", 1);
    let notes = crate::story::notes(&t);
    assert!(notes
        .iter()
        .any(|n| n.contains("takes it over and the statement adds 1")));
    assert!(!notes.iter().any(|n| n.contains("the CASE adds 1")));
}
