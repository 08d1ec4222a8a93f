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
    let mut params = Params::new();
    params.insert("source".to_string(), source.to_string());
    params.insert("failover".to_string(), failover.to_string());
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
fn every_source_and_failover_meets_its_expectation_over_many_seeds() {
    for source in SOURCES {
        for failover in ["no", "yes"] {
            for seed in 0..60 {
                let req = request(source, failover, seed);
                let t = run(&req, Limits::default(), Recording::Summary).unwrap();
                let missed = expectation_for(&req).unwrap().mismatches(&t);
                assert!(
                    missed.is_empty(),
                    "{source} failover={failover} seed {seed}: {missed:?}"
                );
            }
        }
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
        for failover in ["no", "yes"] {
            for seed in 0..200 {
                let t = run(
                    &request(source, failover, seed),
                    Limits::default(),
                    Recording::Summary,
                )
                .unwrap();
                assert!(t.beats.len() >= 5, "{source} {failover}");
                let missed: Vec<&str> = t
                    .beats
                    .iter()
                    .filter(|b| b.seq.is_none())
                    .map(|b| b.key.as_str())
                    .collect();
                assert!(
                    missed.is_empty(),
                    "{source} failover={failover} seed {seed}: {missed:?}"
                );
            }
        }
    }
}
