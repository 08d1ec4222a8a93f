//! `redis-failover` on a real Redis primary and replica (`scripts/conformance.sh` starts them
//! and sets `COORDLAB_REDIS_PRIMARY`, `COORDLAB_REDIS_REPLICA` and `COORDLAB_REDIS_REPLICA_2`: the model's store-1, store-2 and store-3). The two cases share the
//! servers, so they run one after the other in one test.

use coordlab_conformance::redis_check::{check, Servers};
use coordlab_conformance::server_env;

#[test]
fn redis_failover_on_a_real_primary_and_replica() {
    let (Some(primary), Some(replica), Some(replica_2)) = (
        server_env("COORDLAB_REDIS_PRIMARY"),
        server_env("COORDLAB_REDIS_REPLICA"),
        server_env("COORDLAB_REDIS_REPLICA_2"),
    ) else {
        return;
    };
    let servers = Servers {
        primary,
        replicas: [replica, replica_2],
    };
    let cases: [&[(&str, &str)]; 3] = [
        // The lock is lost: the promoted replica grants it to B with A's token, 42.
        &[("wait", "off")],
        // The write reaches the replica before the crash: WAIT 1 answers 1, A starts, and the
        // promoted replica still refuses B.
        &[("wait", "wait-1"), ("replication_lag_ms", "10")],
        // The primary crashes while A's WAIT still waits: A never starts; B's lock on the
        // promoted replica is trusted once its own WAIT 1 answers 1.
        &[("wait", "wait-1")],
    ];
    let mut failed = Vec::new();
    for params in cases {
        let report = check(&servers, params);
        println!("== redis-failover {params:?}\n{}", report.text());
        if !report.mismatches.is_empty() {
            failed.push(format!("{params:?}:\n{}", report.mismatches.join("\n")));
        }
    }
    assert!(
        failed.is_empty(),
        "the real Redis disagrees with the model:\n{}",
        failed.join("\n")
    );
}
