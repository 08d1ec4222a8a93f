//! `wrong-release`: both release statements reach their declared outcome for many seeds; a
//! naive delete hands the lease to C while B still holds it, and, because deleting the row
//! threw its counter away, C's token is 1, below B's 2: the fence refuses the newer holder. A
//! compare-and-delete does not hand the lease over, and the account ends right either way.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

use crate::story::{beat_at, holding};

fn request(release: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("release".to_string(), release.to_string());
    RunRequest {
        scenario: "wrong-release".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(release: &str, seed: u64, recording: Recording) -> Trace {
    run(&request(release, seed), Limits::default(), recording).unwrap()
}

fn verdict(t: &Trace, name: &str) -> Verdict {
    t.properties.iter().find(|p| p.name == name).unwrap().verdict
}

fn first(t: &Trace, needle: &str) -> usize {
    t.entries
        .iter()
        .position(|e| e.text.contains(needle) || e.notes.iter().any(|n| n.contains(needle)))
        .unwrap_or_else(|| panic!("no entry mentions {needle:?}"))
}

#[test]
fn every_variant_meets_its_expectation_across_seeds() {
    for release in ["naive-delete", "compare-and-delete"] {
        for seed in 0..200 {
            let req = request(release, seed);
            let t = run(&req, Limits::default(), Recording::Summary).unwrap();
            let miss = expectation_for(&req).unwrap().mismatches(&t);
            assert!(miss.is_empty(), "release={release} seed={seed}: {miss:?}");
        }
    }
}

#[test]
fn a_naive_delete_by_a_lets_c_in_while_b_still_holds_the_lease() {
    for seed in [1, 5, 99] {
        let t = trace("naive-delete", seed, Recording::Full);
        let a_deletes = first(&t, "worker-A -> lease-store: release account-42, any owner");
        assert!(t.entries[a_deletes]
            .notes
            .iter()
            .any(|n| n.contains("the row is worker-B's now")));
        assert!(t.entries[a_deletes]
            .notes
            .iter()
            .any(|n| n == "DELETE FROM lease WHERE name = 'account-42' → DELETE 1"));
        // The row and its counter are gone: C's insert starts again at 1, below B's 2.
        let c_granted = first(&t, "lease-store -> worker-C: granted account-42, token 1");
        let c_rejected = first(&t, "ledger -> worker-C: step 2: UPDATE 0 (rejected)");
        assert!(a_deletes < c_granted && c_granted < c_rejected, "seed {seed}");
        let inverted = first(
            &t,
            "the newer holder is worker-C: its grant came after worker-B's",
        );
        assert!(c_granted < inverted && inverted <= c_rejected, "seed {seed}");
        // Between C's grant and C's rejection both believe they hold the lease.
        let both = t.entries[c_granted..c_rejected].iter().any(|e| {
            e.snapshot
                .as_ref()
                .and_then(|s| s.highlight.as_deref())
                .is_some_and(|h| h.contains("worker-B and worker-C each believe they own account-42"))
        });
        assert!(both, "seed {seed}: B and C never held at once");
        assert_eq!(t.outcome["overlapping_grants"], json!(1));
        assert_eq!(verdict(&t, "no-overlapping-grants"), Verdict::Violated);
    }
}

#[test]
fn compare_and_delete_refuses_a_and_c_waits_until_b_has_released() {
    for seed in [1, 5, 99] {
        let t = trace("compare-and-delete", seed, Recording::Lines);
        let refused = first(
            &t,
            "worker-A's release names itself as owner, but account-42 now belongs to worker-B",
        );
        assert!(t.entries[refused + 1]
            .text
            .contains("lease-store -> worker-A: released nothing: 0 rows"));
        let c_denied = first(&t, "worker-C asks for account-42, but worker-B holds it");
        let b_releases = first(&t, "worker-B releases account-42: the row is deleted");
        // B deleted its own row, so C's insert starts the counter again at 1.
        let c_granted = first(&t, "lease-store -> worker-C: granted account-42, token 1");
        assert!(
            refused < c_denied && c_denied < b_releases && b_releases < c_granted,
            "seed {seed}"
        );
        assert_eq!(verdict(&t, "no-overlapping-grants"), Verdict::Holds);
        assert_eq!(
            t.outcome["max_concurrent_holders"],
            json!(2),
            "A and B still overlapped by belief"
        );
    }
}

#[test]
fn the_fence_keeps_the_account_right_in_both_variants() {
    for release in ["naive-delete", "compare-and-delete"] {
        for seed in 0..50 {
            let t = trace(release, seed, Recording::Summary);
            assert_eq!(t.outcome["balance"], json!(80), "{release} seed {seed}");
            assert_eq!(verdict(&t, "no-double-debit"), Verdict::Holds);
            assert_eq!(verdict(&t, "fence-monotonic"), Verdict::Holds);
            // A's stale step 1 bounced in both; in the naive variant C's step 2 did too.
            let rejected = t.outcome["rejected_writes"].as_array().unwrap();
            assert_eq!(rejected[0]["worker"], json!("worker-A"));
            assert_eq!(rejected.len(), if release == "naive-delete" { 2 } else { 1 });
        }
    }
}

#[test]
fn every_step_is_narrated() {
    for release in ["naive-delete", "compare-and-delete"] {
        for seed in 0..20 {
            let t = trace(release, seed, Recording::Lines);
            let silent: Vec<String> = t
                .entries
                .iter()
                .filter(|e| e.notes.is_empty())
                .map(|e| e.line())
                .collect();
            assert!(silent.is_empty(), "release={release} seed={seed}: {silent:#?}");
        }
    }
}

#[test]
fn a_naive_delete_leaves_b_believing_with_no_row_and_then_c_granted() {
    for seed in 0..20 {
        let t = trace("naive-delete", seed, Recording::Lines);
        let (deleted, c_inserts) = (beat_at(&t, "deleted"), beat_at(&t, "c-inserts"));
        // The beat is the store's grant: the row names B before B has heard.
        let takeover = beat_at(&t, "b-takes-over");
        assert_eq!(holding(&t, takeover, "worker-B"), (false, true), "seed {seed}");
        // The row is gone while B's grant would still run: B believes, nobody is granted.
        assert_eq!(holding(&t, deleted, "worker-B"), (true, false), "seed {seed}");
        assert!(
            t.entries[deleted].holdings.iter().all(|h| !h.granted),
            "seed {seed}"
        );
        assert_eq!(holding(&t, c_inserts, "worker-B"), (true, false), "seed {seed}");
        assert_eq!(holding(&t, c_inserts, "worker-C"), (false, true), "seed {seed}");
        // Once C hears, both believe, and only C is on record.
        let both = (c_inserts..t.entries.len())
            .find(|&seq| holding(&t, seq, "worker-C").0)
            .expect("C hears it was granted");
        assert_eq!(holding(&t, both, "worker-B"), (true, false), "seed {seed}");
        assert_eq!(holding(&t, both, "worker-C"), (true, true), "seed {seed}");
    }
    // A compare-and-delete keeps B's row: B stays granted through A's release.
    let t = trace("compare-and-delete", 1, Recording::Lines);
    let no_match = beat_at(&t, "a-no-match");
    assert_eq!(holding(&t, no_match, "worker-B"), (true, true));
}
