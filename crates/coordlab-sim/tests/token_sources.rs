//! `token-sources`: seven stores, one takeover. Every source hands B a higher token and the
//! ledger refuses A's late 33; with a failover, the quorum-replicated stores keep the counter
//! and Redis, replicating asynchronously, hands 33 to a second holder.

use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{expectation_for, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};
use serde_json::json;

const SOURCES: [&str; 7] = [
    "lease-table",
    "postgres-sequence",
    "dynamodb",
    "k8s-lease",
    "etcd",
    "zookeeper",
    "redis-lua",
];

fn request(source: &str, failover: &str, seed: u64) -> RunRequest {
    request_with(source, failover, "exact", seed)
}

fn request_with(source: &str, failover: &str, worker_clock: &str, seed: u64) -> RunRequest {
    let mut params = Params::new();
    params.insert("source".to_string(), source.to_string());
    params.insert("failover".to_string(), failover.to_string());
    params.insert("worker_clock".to_string(), worker_clock.to_string());
    RunRequest {
        scenario: "token-sources".into(),
        params,
        seed,
        actions: vec![],
    }
}

fn trace(source: &str, failover: &str) -> Trace {
    run(&request(source, failover, 1), Limits::default(), Recording::Lines).unwrap()
}

fn b_token(t: &Trace) -> u64 {
    t.outcome["grants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["worker"] == json!("worker-B"))
        .unwrap()["token"]
        .as_u64()
        .unwrap()
}

#[test]
fn every_source_failover_and_clock_meets_its_expectation_over_many_seeds() {
    for source in SOURCES {
        for failover in ["no", "yes"] {
            for clock in ["exact", "b-fast"] {
                for seed in 0..60 {
                    let req = request_with(source, failover, clock, seed);
                    let t = run(&req, Limits::default(), Recording::Summary).unwrap();
                    let missed = expectation_for(&req).unwrap().mismatches(&t);
                    assert!(
                        missed.is_empty(),
                        "{source} failover={failover} clock={clock} seed {seed}: {missed:?}"
                    );
                }
            }
        }
    }
}

fn notes(t: &Trace) -> String {
    t.entries
        .iter()
        .flat_map(|e| e.notes.iter().cloned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn beat_text(t: &Trace, key: &str) -> String {
    let b = t
        .beats
        .iter()
        .find(|b| b.key == key)
        .unwrap_or_else(|| panic!("no beat {key}"));
    format!("{} {}", b.title, b.text)
}

#[test]
fn dynamodb_and_kubernetes_judge_expiry_by_the_workers_clock_not_the_stores() {
    for (source, needle) in [("dynamodb", "sent :now"), ("k8s-lease", "by its own clock")] {
        let text = notes(&trace(source, "no"));
        assert!(text.contains(needle), "{source}: {needle:?} missing");
        assert!(!text.contains("by ddb-1's clock"), "{source}");
        assert!(!text.contains("by etcd-1's clock"), "{source}");
    }
    assert!(notes(&trace("k8s-lease", "no")).contains("no fencing"));
}

#[test]
fn a_fast_worker_clock_steals_a_dynamodb_or_kubernetes_lease_and_only_the_fence_holds() {
    for source in ["dynamodb", "k8s-lease"] {
        let t = run(
            &request_with(source, "no", "b-fast", 3),
            Limits::default(),
            Recording::Lines,
        )
        .unwrap();
        let verdict = |name: &str| t.properties.iter().find(|p| p.name == name).unwrap().verdict;
        assert_eq!(verdict("one-grant"), Verdict::Violated, "{source}");
        assert_eq!(verdict("no-double-debit"), Verdict::Holds, "{source}");
        assert_eq!(
            t.outcome["rejected_writes"],
            json!([{"step": 4, "token": 33, "worker": "worker-A"}]),
            "{source}"
        );
        assert!(beat_text(&t, "b-steals").contains("10 s left"), "{source}");
    }
    // Where the store keeps the time, B's fast clock changes nothing: A finishes inside its lease.
    for source in ["etcd", "lease-table", "zookeeper", "redis-lua"] {
        let t = run(
            &request_with(source, "no", "b-fast", 3),
            Limits::default(),
            Recording::Lines,
        )
        .unwrap();
        assert_eq!(t.outcome["rejected_writes"], json!([]), "{source}");
        assert!(beat_text(&t, "a-finishes").contains("its own clock"), "{source}");
    }
}

#[test]
fn zookeeper_waits_on_a_watch_and_uses_czxid() {
    let t = trace("zookeeper", "no");
    // Deliveries of B's create (worker-B is node 1).
    let creates = t
        .entries
        .iter()
        .filter_map(|e| e.message.as_ref())
        .filter(|m| m.label == "create EPHEMERAL_SEQUENTIAL" && m.from.0 == 1)
        .count();
    assert_eq!(creates, 1, "B sends its create once, then watches");
    let text = notes(&t);
    assert!(text.contains("sets a watch on the node just ahead"));
    assert!(text.contains("czxid"));
    assert!(!text.contains("sequence number"));
    assert!(beat_text(&t, "a-acquires").contains("container parent"));
}

#[test]
fn a_postgres_quorum_grant_names_synchronous_replication() {
    for source in ["lease-table", "postgres-sequence"] {
        assert!(
            notes(&trace(source, "no")).contains("synchronous_standby_names"),
            "{source}"
        );
    }
}

#[test]
fn every_source_gives_b_a_higher_token_and_refuses_a() {
    for source in SOURCES {
        let t = trace(source, "no");
        let want = if source == "etcd" { 35 } else { 34 };
        assert_eq!(b_token(&t), want, "{source}");
        assert_eq!(
            t.outcome["rejected_writes"],
            json!([{"step": 2, "token": 33, "worker": "worker-A"}]),
            "{source}"
        );
    }
}

#[test]
fn each_source_names_its_real_command() {
    for (source, needle) in [
        ("lease-table", "ON CONFLICT (name) DO UPDATE"),
        ("postgres-sequence", "nextval('fence_seq_account_42')"),
        ("dynamodb", "ReturnValues: \"UPDATED_NEW\""),
        ("k8s-lease", "leaseTransitions"),
        ("etcd", "CreateRevision(\"/locks/account-42\") == 0"),
        ("zookeeper", "EPHEMERAL_SEQUENTIAL"),
        ("redis-lua", "'NX', 'PX'"),
    ] {
        let t = trace(source, "no");
        assert!(
            t.entries
                .iter()
                .any(|e| e.notes.iter().any(|n| n.contains(needle))),
            "{source}: no {needle:?}"
        );
    }
}

#[test]
fn a_failover_keeps_the_counter_of_a_quorum_store_and_redis_reissues_33() {
    for source in SOURCES {
        let t = trace(source, "yes");
        let unique = t
            .properties
            .iter()
            .find(|p| p.name == "tokens-unique")
            .unwrap()
            .verdict;
        if source == "redis-lua" {
            assert_eq!(b_token(&t), 33);
            assert_eq!(unique, Verdict::Violated);
            assert_eq!(t.outcome["rejected_writes"], json!([]));
        } else {
            assert!(b_token(&t) > 33, "{source}");
            assert_eq!(unique, Verdict::Holds, "{source}");
        }
    }
}

#[test]
fn every_beat_happens_for_every_source_with_and_without_failover() {
    for source in SOURCES {
        for (failover, clock) in [
            ("no", "exact"),
            ("yes", "exact"),
            ("no", "b-fast"),
            ("yes", "b-fast"),
        ] {
            for seed in 0..200 {
                let t = run(
                    &request_with(source, failover, clock, seed),
                    Limits::default(),
                    Recording::Summary,
                )
                .unwrap();
                assert!(t.beats.len() >= 4, "{source} {failover} {clock}");
                let missed: Vec<&str> = t
                    .beats
                    .iter()
                    .filter(|b| b.seq.is_none())
                    .map(|b| b.key.as_str())
                    .collect();
                assert!(
                    missed.is_empty(),
                    "{source} failover={failover} clock={clock} seed {seed}: {missed:?}"
                );
            }
        }
    }
}
