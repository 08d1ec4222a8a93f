//! `consensus-lock` (curriculum §6–7): the failure of `redis-failover` against an etcd-style
//! lock — etcd's `concurrency.Mutex` on a store that Raft replicates. store-1, the Raft leader,
//! commits worker-a's key and crashes at the same moment as the Redis primary does in
//! `redis-failover`. The key was committed on a majority before worker-a heard yes, so the new
//! leader still has it: worker-b, whose own key came later, waits by watching it, and
//! revision 2 is never handed out again. Then worker-a freezes in a GC pause past its lease:
//! the leader revokes the lease through the log, which deletes worker-a's key, and worker-b
//! holds with its own key's higher create revision — and the ledger still has to refuse
//! worker-a's late write. Consensus fences the store's own leader; only the token fences the
//! worker.
//!
//! The revision counts changes to keys only: worker-a's put is 2, worker-b's 3, the revoke
//! that deletes worker-a's key 4, worker-b's release 5. Keep-alives and reads are answered
//! without a log entry; lease grants and revokes are entries.
//!
//! Node ids and names match `redis-failover` so the two can run side by side with the same
//! fault clicks: store-1..3 are nodes 0..2, worker-a 3, worker-b 4, the ledger 5.

use super::consensus_world::ConsensusWorld;
use crate::json;
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::job::AMOUNT_PER_STEP;
use crate::protocols::lease::fenced_resource::LedgerIntro;
use crate::protocols::raft::{RaftBug, RaftServer, ServerConfig, ServerDurable};
use crate::protocols::redis_locks::redis_job::JobPlan;
use crate::protocols::services::lock_client::{EtcdPlan, EtcdWorker};
use crate::protocols::services::lock_service::LockServer;
use crate::scenarios::common::place_fresh_workers;
use crate::scenarios::property_library::add_ledger;
use crate::scenarios::property_library::{balance_after, OPENING_BALANCE};
use crate::scenarios::raft_common::{
    bug, common_params, election_timeouts_ms, int_param, num, promised_verdicts, MIN_SPREAD_MS, PROPERTIES,
};
use crate::scenarios::{Expectation, Listing, Params};

#[path = "consensus_lock_beats.rs"]
mod beats;

pub const ID: &str = "consensus-lock";
/// Who the setup added: the three stores (store-1 boots first), the workers, the ledger.
#[derive(Clone, Copy, Debug)]
pub struct ConsensusCast {
    pub stores: [NodeId; 3],
    pub workers: [NodeId; 2],
    pub ledger: NodeId,
}
/// The mutex's prefix: each worker's key is `/lock/account-42/<lease id>`.
pub const LOCK_PREFIX: &str = "/lock/account-42";
/// The same moments as `redis-failover`: A's job fires, B's job fires, store-1 crashes
/// (the default of `crash_at_ms`).
pub const A_START_MS: u64 = 200;
pub const B_START_MS: u64 = 220;
pub const CRASH_AT_MS: u64 = 250;
/// When worker-a freezes: in the middle of its second step.
pub const PAUSE_AT_MS: u64 = 1_000;
pub const LATENCY_MIN_MS: u64 = 1;
pub const LATENCY_MAX_MS: u64 = 3;
const STEPS: u32 = 4;
const STEP_MS: u64 = 500;
const REQUEST_TIMEOUT_MS: u64 = 300;
/// The shortest election timeout the story's timeline assumes (the parameter's default):
/// after store-1's crash, the new leader restarts the lease count no sooner than this.
const ELECTION_TIMEOUT_MIN_MS: u64 = 150;
/// With the default election timeouts the new leader restarts the lease count within this
/// long of store-1's crash.
const NEW_LEADER_WITHIN_MS: u64 = 400;
/// A request after the crash (worker-a's first keep-alive after its pause, worker-b's takeover)
/// may need this long to find the new leader.
const FIND_LEADER_MS: u64 = 1_000;
/// The demo runs at least this long, and at least this much past the end of A's pause.
const MIN_RUN_MS: u64 = 15_000;
const AFTER_PAUSE_MS: u64 = 4_000;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "See a grant survive the leader's crash because a majority stored it",
        "Use the key's create revision as the fencing token",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "The store's leader crashes right after granting the lock. Why does the new leader still know the holder?",
        answers: &["The grant was committed on a majority before it was answered", "It asks the client", "The lock is kept on disk by the client"],
        correct: 0,
        why: "A consensus store answers only after a majority has the write, and any new leader comes from that majority.",
    },
};

pub fn info() -> Listing {
    let mut params = vec![
        int_param(
            "crash_at_ms",
            "store-1 crashes at",
            "When store-1, the first leader, crashes: 250 ms is just after it committed worker-a's key, the same moment as in redis-failover. 0: it never crashes.",
            "250",
            0,
            5_000,
            "ms",
        ),
        int_param(
            "ttl_ms",
            "Lease TTL",
            "How long a lease lasts without a keep-alive, counted by the leader's clock. Workers send a keep-alive every third of it; the leader answers from memory, with no log entry.",
            "10000",
            3_000,
            60_000,
            "ms",
        ),
        int_param(
            "pause_ms",
            "worker-a's pause",
            "How long worker-a freezes (a GC pause) from 1 s, in the middle of its job; 0 for no pause.",
            "15000",
            0,
            120_000,
            "ms",
        ),
    ];
    params.extend(common_params());
    Listing {
        sections: "§6–7",
        title: "Consensus lock (etcd): the grant survives the leader's crash",
        summary: "The redis-failover failure against an etcd-style lock on a Raft-replicated store. Each worker puts its own key under /lock/account-42/ with Txn(If(CreateRevision(key) == 0), Then(Put(key, me, lease))); the oldest key holds, and its create revision is the fencing token. store-1 commits worker-a's key (revision 2) and crashes a moment later: the new leader still has it, so worker-b (revision 3) waits, watching worker-a's key. Then worker-a freezes past its lease: the leader revokes it through the log, worker-a's key is deleted, worker-b holds — and the ledger still has to refuse worker-a's late write. The revision counts changes to keys only; keep-alives need no log entry. Compare with redis-failover.",
        params,
    }
}

fn ttl_ms(params: &Params) -> u64 {
    num(params, "ttl_ms", 10_000).max(1)
}

fn pause_ms(params: &Params) -> u64 {
    num(params, "pause_ms", 15_000)
}

fn crash_at_ms(params: &Params) -> u64 {
    num(params, "crash_at_ms", CRASH_AT_MS)
}

pub fn stop_at_ms(params: &Params) -> u64 {
    (PAUSE_AT_MS + pause_ms(params) + AFTER_PAUSE_MS).max(MIN_RUN_MS)
}

/// Whether the Raft timing is the chapter's default, which the story's timeline assumes:
/// store-1 leads before worker-a's job fires, crashes after it committed worker-a's key (by
/// about 225 ms) and before worker-a freezes, and a new leader is elected within 0.35 s.
fn default_timing(params: &Params) -> bool {
    (240..=PAUSE_AT_MS).contains(&crash_at_ms(params))
        && num(params, "election_timeout_ms_min", ELECTION_TIMEOUT_MIN_MS) == ELECTION_TIMEOUT_MIN_MS
        && num(params, "election_timeout_ms_max", 300) == 300
        && num(params, "heartbeat_ms", 50) == 50
}

/// worker-a's lease surely runs out during the pause, and worker-b has taken over and
/// written before worker-a wakes. (The new leader restarts the count within 0.4 s of the
/// crash; worker-b hears of the deletion at once through its watch, and its requests, like
/// worker-a's, may need `FIND_LEADER_MS` to reach the new leader; its first write comes a
/// step's work after its grant.)
fn zombie_story(params: &Params) -> bool {
    let ttl = ttl_ms(params);
    // worker-a does not renew before it freezes: with a TTL of at least 3 s its first
    // keep-alive is due after 1.2 s.
    let expiry_by = crash_at_ms(params) + NEW_LEADER_WITHIN_MS + ttl;
    PAUSE_AT_MS + pause_ms(params) > expiry_by + FIND_LEADER_MS + STEP_MS
}

/// worker-a surely wakes with its lease still valid and finishes the job itself. (Its first
/// keep-alive after the pause may need a second to find the new leader.)
fn no_expiry(params: &Params) -> bool {
    pause_ms(params) == 0
        || PAUSE_AT_MS + pause_ms(params) + FIND_LEADER_MS
            < crash_at_ms(params) + ELECTION_TIMEOUT_MIN_MS + ttl_ms(params)
}

pub fn expectation(params: &Params) -> Expectation {
    let mut verdicts = Vec::new();
    let mut outcome = Vec::new();
    if bug(params) != RaftBug::None {
        // A planted Raft bug may or may not break the lock in a given run; what it cannot
        // break is the Raft properties it leaves alone, and the ledger's own fence.
        verdicts = promised_verdicts(bug(params));
        verdicts.push(("fence-monotonic".to_string(), Verdict::Holds));
        return Expectation { outcome, verdicts };
    }
    for name in ["one-holder-per-store", "tokens-increase", "fence-monotonic"] {
        verdicts.push((name.to_string(), Verdict::Holds));
    }
    verdicts.extend(PROPERTIES.iter().map(|(n, _)| (n.to_string(), Verdict::Holds)));
    // Someone holds the lock once the survivors elect a leader, which a fixed or narrow
    // election timeout can keep from happening: then the promise is only that no two hold it.
    let (min, max) = election_timeouts_ms(params, ELECTION_TIMEOUT_MIN_MS);
    if max >= min + MIN_SPREAD_MS {
        outcome.push(("max_concurrent_holders".to_string(), json!(1)));
    }
    outcome.push(("tokens_reissued".to_string(), json!(false)));
    if default_timing(params) {
        outcome.push(("first_leader".to_string(), json!("store-1")));
        outcome.push(("first_grant_survived_failover".to_string(), json!(true)));
        if zombie_story(params) {
            outcome.push(("grants_made".to_string(), json!(2)));
            outcome.push(("first_grant_expired".to_string(), json!(true)));
            outcome.push(("stale_write_rejected".to_string(), json!(true)));
            outcome.push(("max_concurrent_believers".to_string(), json!(2)));
            outcome.push(("balance".to_string(), json!(balance_after(STEPS))));
        } else if no_expiry(params) {
            outcome.push(("grants_made".to_string(), json!(2)));
            outcome.push(("first_grant_expired".to_string(), json!(false)));
            outcome.push(("stale_write_rejected".to_string(), json!(false)));
            outcome.push(("max_concurrent_believers".to_string(), json!(1)));
            outcome.push(("balance".to_string(), json!(balance_after(STEPS))));
        }
    }
    Expectation { outcome, verdicts }
}

const STORE_FAULTS: [FaultKind; 5] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
    FaultKind::Clock,
];

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let mut setup = Setup::new(LinkConfig::reliable(
        LATENCY_MIN_MS * MS_US,
        LATENCY_MAX_MS * MS_US,
    ));
    let (min, max) = election_timeouts_ms(params, ELECTION_TIMEOUT_MIN_MS);
    let stop_at = stop_at_ms(params);
    // Every node names others added after it: the ids come first, the nodes after.
    let stores = [setup.reserve(), setup.reserve(), setup.reserve()];
    let workers = [setup.reserve(), setup.reserve()];
    let ledger = add_ledger(&mut setup, LedgerIntro::RefusesBelowHighest, OPENING_BALANCE);
    let cast = ConsensusCast {
        stores,
        workers,
        ledger,
    };
    let config = ServerConfig {
        cluster: stores.to_vec(),
        election_timeout_ms_min: min,
        election_timeout_ms_max: max,
        heartbeat_ms: num(params, "heartbeat_ms", 50),
        stop_at_ms: stop_at,
        bug: bug(params),
    };
    for (id, name) in stores.into_iter().zip(["store-1", "store-2", "store-3"]) {
        let mut server = RaftServer::new(id, config.clone());
        // store-1 boots first and times out first: it leads term 1, as the Redis primary is
        // store-1 in redis-failover.
        if id == stores[0] {
            server.first_timeout_ms = Some((min / 2, min / 2 + 10));
        }
        setup.place_live(
            id,
            name,
            "store",
            &STORE_FAULTS,
            config.clone(),
            LockServer::new(server),
            ServerDurable::default(),
        );
    }
    let ttl = ttl_ms(params);
    let plan = |start_at_ms: u64| EtcdPlan {
        job: JobPlan {
            key: LOCK_PREFIX.into(),
            ttl_ms: ttl,
            start_at_ms,
            max_attempts: 1,
            ..JobPlan::of_steps(STEPS, STEP_MS, AMOUNT_PER_STEP, ledger)
        },
        servers: stores.to_vec(),
        first_guess: stores[0],
        keepalive_ms: (ttl / 3).max(1),
        request_timeout_ms: REQUEST_TIMEOUT_MS,
        stop_at_ms: stop_at,
    };
    place_fresh_workers::<EtcdWorker>(
        &mut setup,
        [
            (workers[0], "worker-a", plan(A_START_MS)),
            (workers[1], "worker-b", plan(B_START_MS)),
        ],
    );
    if crash_at_ms(params) > 0 {
        setup.script(crash_at_ms(params) * MS_US, Fault::Crash { node: stores[0] });
    }
    if pause_ms(params) > 0 {
        setup.script(
            PAUSE_AT_MS * MS_US,
            Fault::Pause {
                node: workers[0],
                duration_ms: pause_ms(params),
            },
        );
    }
    setup.set_world(ConsensusWorld::new(
        stores.to_vec(),
        workers.to_vec(),
        ledger,
        LOCK_PREFIX,
    ));
    beats::beats(&mut setup, cast, crash_at_ms(params) > 0);
    setup
}
