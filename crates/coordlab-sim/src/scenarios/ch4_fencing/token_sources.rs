//! `token-sources` (curriculum §5, "How you actually get a token", and §6 on failover): the
//! same takeover told with seven stores' own commands. A takes the lease with 33, writes step
//! 1 and freezes for 36 s; when its lease runs out B takes over with a higher token, and A's
//! late write is refused. Each store hands out the token in the same atomic operation that
//! grants the lease: the lease table's counter column, `nextval` in the acquiring
//! transaction, DynamoDB's conditional `UpdateItem` with `ReturnValues`, a Kubernetes Lease's
//! `leaseTransitions`, etcd's revision (two up: the expiry's delete is a revision too), a
//! ZooKeeper lock node's `czxid` (fixed at create; B then watches the node ahead), and Redis's
//! Lua script doing `SET NX PX` and `INCR` together.
//!
//! Whose clock judges expiry differs. PostgreSQL's `now()`, etcd's lease, ZooKeeper's session
//! and Redis's `PX` run on the store. DynamoDB has no clock in a condition: `:now` is the
//! worker's reading. client-go's election times `leaseDurationSeconds` on the candidate's
//! clock from when it saw the record. `worker_clock=b-fast`: B's clock runs 50% fast (far more
//! than real drift, so it shows in one run) and A freezes for 13 s, well inside its lease. With
//! DynamoDB or a Kubernetes Lease, B takes over at about 20 s while A's lease has 10 s left;
//! only the fence refuses A's write. The other stores ignore B's clock and A finishes.
//!
//! `failover=yes`: the store's primary (or leader) crashes right after granting A. Stores that
//! replicate by quorum (etcd, ZooKeeper, Kubernetes through etcd, DynamoDB, PostgreSQL with a
//! synchronous standby) told A only once a second copy had the grant, so the copy that takes
//! over has it too, and the story ends as before. Redis answered first and streams later: the
//! promoted replica never saw A's lock or its INCR, grants the lease to B at once and hands
//! out 33 again. Two holders with the same token: the fence cannot tell them apart.

use crate::json;
use crate::kernel::faults::Fault;
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::world::Nodes;
use crate::presentation::durations::seconds;
use crate::presentation::narration::lease::placed_lease::acquire_command;
use crate::protocols::lease::fence_worker::{AcquireVia, FenceWorkerConfig, FenceWorkerPlan};
use crate::protocols::lease::fenced_resource::LedgerIntro;
use crate::protocols::lease::placed_lease::{PlacedConfig, PlacedLease, Replication, TokenSource};
use crate::scenarios::common::WORKER_FAULTS;
use crate::scenarios::fence_world::{held_token, FenceCast, FenceProperty, FenceWorld};
use crate::scenarios::lease_setup::STORE_FAULTS;
use crate::scenarios::lease_setup::{choice, chosen, holds_if, OPENING_BALANCE};
use crate::scenarios::property_library::{ledger_row, step_applied_twice};
use crate::scenarios::{Expectation, Listing, Params};
use crate::trace::EventKind;

pub const ID: &str = "token-sources";

/// When the primary crashes with `failover=yes`: after A's grant (a quorum grant is answered
/// within about 116 ms), before Redis streams it (200 ms after the answer).
const CRASH_AT_MS: u64 = 130;
const REDIS_SHIP_MS: u64 = 200;
/// What the course says this scenario teaches, and the question it asks.
pub const COURSE: crate::scenarios::CourseNotes = crate::scenarios::CourseNotes {
    objectives: &[
        "Find where each store gets a token from: a revision, a version, a counter",
        "See a quorum store keep its counter through failover while Redis reissues one",
    ],
    question: crate::scenarios::CheckQuestion {
        prompt: "After a failover, Redis hands token 33 to a second holder. Why?",
        answers: &[
            "Redis has no counters",
            "Tokens are random",
            "The counter's latest value was lost with the primary",
        ],
        correct: 2,
        why: "The increment was never replicated, so the new primary counts from an older value.",
    },
};

pub fn info() -> Listing {
    Listing {
        sections: "§5–6",
        title: "Where a token comes from",
        summary: "Seven stores hand out a token with the lease. After a failover a quorum store keeps its counter; Redis reissues 33 to a second holder.",
        params: vec![
            choice(
                "source",
                "Token source",
                "The store that grants the lease and its token.",
                &[
                    ("lease-table", "lease table counter"),
                    ("postgres-sequence", "Postgres sequence"),
                    ("dynamodb", "DynamoDB UpdateItem"),
                    ("k8s-lease", "Kubernetes Lease"),
                    ("etcd", "etcd revision"),
                    ("zookeeper", "ZooKeeper sequence"),
                    ("redis-lua", "Redis Lua script"),
                ],
            ),
            choice(
                "worker_clock",
                "Worker-B's clock",
                "Whether worker-B's clock runs fast. It matters only where a worker's clock judges expiry.",
                &[("exact", "accurate"), ("b-fast", "runs 50% fast")],
            ),
            choice(
                "failover",
                "Failover",
                "Whether the store's primary crashes right after granting A.",
                &[("no", "no"), ("yes", "yes, right after A's grant")],
            ),
        ],
    }
}

fn source(params: &Params) -> TokenSource {
    match params.get("source").map_or("lease-table", String::as_str) {
        "postgres-sequence" => TokenSource::PostgresSequence,
        "dynamodb" => TokenSource::DynamoDb,
        "k8s-lease" => TokenSource::K8sLease,
        "etcd" => TokenSource::Etcd,
        "zookeeper" => TokenSource::ZooKeeper,
        "redis-lua" => TokenSource::RedisLua,
        _ => TokenSource::LeaseTable,
    }
}

/// Whether the run reissues a token: Redis, failing over.
fn reissues(params: &Params) -> bool {
    source(params) == TokenSource::RedisLua && chosen(params, "failover", "yes")
}

/// Whether expiry is judged on a worker's clock, not the store's.
fn worker_judges(source: TokenSource) -> bool {
    matches!(source, TokenSource::DynamoDb | TokenSource::K8sLease)
}

/// Whether B's fast clock makes it take a lease A still holds.
fn stolen(params: &Params) -> bool {
    chosen(params, "worker_clock", "b-fast") && worker_judges(source(params)) && !reissues(params)
}

/// When A freezes, and for how long (ms). With B's fast clock the pause ends inside A's lease,
/// and before it A has written three steps.
fn pause_of(b_fast: bool) -> (u64, u64) {
    if b_fast {
        (13_000, 13_000)
    } else {
        (5_000, 36_000)
    }
}

/// B's clock rate with `worker_clock=b-fast`: +50%, the most the kernel allows.
const B_FAST_PPM: i64 = 500_000;

pub fn expectation(params: &Params) -> Expectation {
    let bad = reissues(params);
    let total = FenceWorkerPlan::standard().job_total();
    let balance = if bad {
        OPENING_BALANCE - 2 * total
    } else {
        OPENING_BALANCE - total
    };
    Expectation {
        outcome: vec![("balance".into(), json!(balance))],
        verdicts: vec![
            ("one-grant".into(), holds_if(!bad && !stolen(params))),
            ("tokens-unique".into(), holds_if(!bad)),
            ("no-stale-write".into(), holds_if(!bad)),
            ("no-double-debit".into(), holds_if(!bad)),
        ],
    }
}

fn node_prefix(source: TokenSource) -> &'static str {
    match source {
        TokenSource::LeaseTable | TokenSource::PostgresSequence => "pg",
        TokenSource::DynamoDb => "ddb",
        TokenSource::K8sLease | TokenSource::Etcd => "etcd",
        TokenSource::ZooKeeper => "zk",
        TokenSource::RedisLua => "redis",
    }
}

pub fn setup(params: &Params, _seed: u64) -> Setup {
    let source = source(params);
    let failover = chosen(params, "failover", "yes");
    let b_fast = chosen(params, "worker_clock", "b-fast");
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let cast = FenceCast::reserve(&mut setup, LedgerIntro::RefusesBelowHighest, OPENING_BALANCE);
    let replication = if source == TokenSource::RedisLua {
        Replication::Async {
            ship_ms: REDIS_SHIP_MS,
        }
    } else {
        Replication::Quorum
    };
    let base = PlacedConfig {
        source,
        replication,
        ..PlacedConfig::shared("account-42")
    };
    let prefix = node_prefix(source);
    // Three stores: the primary names the two replicas added after it, and the standby names
    // the primary; their ids are reserved first.
    let [s1, s2, s3] = [setup.reserve(), setup.reserve(), setup.reserve()];
    let configs = [
        PlacedConfig {
            replicas: vec![s2, s3],
            standby: Some(s2),
            ..base.clone()
        },
        PlacedConfig {
            replica: true,
            takes_over_from: Some(s1),
            replicas_then: vec![s3],
            ..base.clone()
        },
        PlacedConfig {
            replica: true,
            ..base.clone()
        },
    ];
    for (i, (id, config)) in [s1, s2, s3].into_iter().zip(configs).enumerate() {
        setup.place::<PlacedLease>(
            id,
            format!("{prefix}-{}", i + 1),
            "lease-store",
            &STORE_FAULTS,
            config,
            PlacedLease::initial(32),
        );
    }
    for (id, name, start) in [(cast.a, "worker-A", (0, 100)), (cast.b, "worker-B", (500, 600))] {
        let config = FenceWorkerConfig {
            plan: FenceWorkerPlan {
                start_after_ms: start,
                ..FenceWorkerPlan::standard()
            },
            store: s1,
            via: AcquireVia::Atomic,
            ledger: cast.ledger,
            failover_to: Some(s2),
            source,
        };
        FenceCast::place(&mut setup, id, name, &WORKER_FAULTS, config);
    }
    if failover {
        setup.script(CRASH_AT_MS * MS_US, Fault::Crash { node: s1 });
    }
    if b_fast {
        setup.script(
            0,
            Fault::ClockDrift {
                node: cast.b,
                drift_ppm: B_FAST_PPM,
            },
        );
    }
    let (pause_at_ms, pause_ms) = pause_of(b_fast);
    setup.script(
        pause_at_ms * MS_US,
        Fault::Pause {
            node: cast.a,
            duration_ms: pause_ms,
        },
    );
    setup.set_world(FenceWorld::for_cast(
        cast,
        vec![s1, s2, s3],
        OPENING_BALANCE,
        FenceWorkerPlan::standard().job_total(),
        vec![
            FenceProperty::OneGrant,
            FenceProperty::TokensUnique,
            FenceProperty::NoStaleWrite,
            FenceProperty::NoDoubleDebit,
            FenceProperty::JobCompletes,
        ],
    ));
    beats(&mut setup, source, failover, b_fast, cast, [s1, s2, s3]);
    setup
}

/// Where the token comes from, in a sentence for the first beat.
fn where_from(source: TokenSource) -> &'static str {
    match source {
        TokenSource::LeaseTable => {
            "the row's fence_token column, raised by the same statement that takes the row"
        }
        TokenSource::PostgresSequence => {
            "nextval of a sequence, drawn inside the transaction that takes the row"
        }
        TokenSource::DynamoDb => {
            "the item's fence attribute: the conditional write ADDs 1, and ReturnValues returns it"
        }
        TokenSource::K8sLease => "the Lease's leaseTransitions, which goes up whenever the holder changes",
        TokenSource::Etcd => "the revision of the put that created the lock key",
        TokenSource::ZooKeeper => "the czxid of A's ephemeral node, the zxid of its create: it only grows, unlike the number in the node's name, which restarts at 0 when ZooKeeper deletes the empty container parent",
        TokenSource::RedisLua => "the INCR in the same Lua script as the SET NX PX",
    }
}

fn wrote(n: &Nodes<'_>, c: FenceCast, w: NodeId, step: u32, accepted: bool) -> bool {
    ledger_row(n, c.ledger).is_some_and(|r| {
        r.writes
            .iter()
            .any(|x| x.worker == w && x.step == step && x.accepted == accepted)
    })
}

/// How B's fast clock lets it take A's lease, for the store whose worker's clock decides.
fn steal_text(source: TokenSource) -> &'static str {
    if source == TokenSource::DynamoDb {
        "worker-B's clock runs 50% fast: about 20 s after A's grant it reads 30 s, past the expires A wrote. :now is B's reading, so the condition holds and B takes over with 34 while A's lease has 10 s left."
    } else {
        "worker-B's clock runs 50% fast: about 20 s after it first saw A's Lease it has counted leaseDurationSeconds with no renewal, so it writes itself in with leaseTransitions 34. A's lease has 10 s left."
    }
}

/// The story; `stores` are the primary and its two replicas.
fn beats(
    setup: &mut Setup,
    source: TokenSource,
    failover: bool,
    b_fast: bool,
    c: FenceCast,
    stores: [NodeId; 3],
) {
    let command = acquire_command(source, "account-42", "worker-A", 30_000);
    setup.beat(
        "a-acquires",
        "A takes the lease with token 33",
        &format!(
            "worker-A runs {command}. Its token, 33, is {}.",
            where_from(source)
        ),
        move |n, _| held_token(n, c.a) == Some(33),
    );
    let reissue = failover && source == TokenSource::RedisLua;
    let (_, pause_ms) = pause_of(b_fast);
    let pause = seconds(pause_ms);
    if failover {
        setup.beat(
            "crash",
            "The primary crashes",
            "The store's primary crashes a few milliseconds after answering A.",
            move |_, step| matches!(step.fault, Some(Fault::Crash { node }) if *node == stores[0]),
        );
        let text = if reissue {
            "Sentinel promotes a replica. Redis answered A before streaming the write, so the new primary has no lock key and its fence counter still reads 32."
        } else {
            "A replica takes over. The grant was on a majority of the copies before A was told, so the new primary has A's lease and the counter at 33."
        };
        setup.beat("takes-over", "A replica takes over", text, move |n, _| {
            n.live::<PlacedLease>(stores[1]).is_some_and(|s| s.primary)
        });
    }
    if reissue {
        setup
            .beat(
                "b-gets-33",
                "B gets the lease, with token 33 again",
                "worker-B runs the same script on the new primary: SET NX succeeds, INCR returns 33. A still holds 33 too.",
                move |n, _| held_token(n, c.b) == Some(33),
            )
            .ask(
                "Both write with 33. What can the ledger's fence do?",
                &[
                    "Refuse whichever writes second",
                    "Nothing: the two holders carry the same number",
                ],
                1,
                "A fence refuses only lower tokens. Two holders of 33 look like one.",
            );
        setup.beat(
            "double-debit",
            "Step 1 is debited twice",
            "A's step 1 and B's step 1 both carry 33, and both land.",
            move |n, _| step_applied_twice(n, c.ledger),
        );
        let wake_step = if b_fast { 4 } else { 2 };
        setup.beat(
            "a-wakes",
            &format!("A wakes and writes step {wake_step} with 33"),
            &format!("After its {pause} pause A carries on. B finished long ago with 33, so 33 is the highest the ledger has seen: A's step {wake_step} lands."),
            move |n, _| wrote(n, c, c.a, wake_step, true),
        );
        return;
    }
    let freeze = if b_fast {
        "A stop-the-world pause halts worker-A after step 3, for 13 s: it wakes at 26 s, inside its 30 s lease by any accurate clock."
    } else {
        "A stop-the-world pause halts worker-A after step 1, for 36 s. It still believes it holds the lease."
    };
    setup.beat(
        "a-freezes",
        "A freezes in a GC pause",
        freeze,
        move |_, step| matches!(step.fault, Some(Fault::Pause { node, .. }) if *node == c.a),
    );
    if b_fast && worker_judges(source) {
        setup
            .beat(
                "b-steals",
                "B's fast clock takes a live lease",
                steal_text(source),
                move |n, _| held_token(n, c.b).is_some_and(|t| t > 33),
            )
            .ask(
                "A wakes at 26 s, inside its lease by its own clock, and writes step 4 with 33. What happens?",
                &["It is refused: B wrote 34 first", "It lands: A still holds the lease"],
                0,
                "B read three steps done and wrote step 4 with 34 before A woke. The lease failed; the fence did not.",
            );
        let why = if source == TokenSource::DynamoDb {
            "DynamoDB compares whatever :now a worker sends."
        } else {
            "client-go documents that its election gives no fencing."
        };
        setup.beat(
            "a-refused",
            "A's write with 33 is refused",
            &format!("Two workers held the lease at once in real time, because a worker's clock judged expiry. Only the token kept the ledger right: {why}"),
            move |n, _| wrote(n, c, c.a, 4, false),
        );
        return;
    }
    if b_fast {
        setup
            .beat(
                "a-finishes",
                "A wakes in time and finishes",
                "B's clock runs 50% fast, but this store judges expiry by its own clock, so B is refused until 30 s. A wakes at 26 s and writes step 4 inside its lease.",
                move |n, _| wrote(n, c, c.a, 4, true),
            )
            .ask(
                "Could B's fast clock have cut A's lease short here?",
                &["Yes, by a third", "No: the store's clock decides"],
                1,
                "A fast clock only makes B ask more often. With DynamoDB or a Kubernetes Lease a worker's clock decides, and it would.",
            );
        setup.beat(
            "b-takes-over",
            "B takes over and finds the job done",
            "At 30 s by the store's clock the lease is over and B gets it with a higher token. The ledger says four steps are done.",
            move |n, _| held_token(n, c.b).is_some_and(|t| t > 33),
        );
        return;
    }
    let b_token = match source {
        TokenSource::Etcd => "35: A's key was deleted when its etcd lease ran out (revision 34), and B's put is the next revision",
        TokenSource::ZooKeeper => "34, the czxid its node got at create, half a second in. B has sent nothing since: the watch on A's node fired when A's session expired and ZooKeeper deleted it",
        TokenSource::DynamoDb => "34: the :now B sent, read from its own clock, is past the expires A's clock wrote",
        TokenSource::K8sLease => "34: by B's own clock, leaseDurationSeconds have passed since it first saw A's Lease unchanged",
        _ => "34",
    };
    setup.beat(
        "b-takes-over",
        "B takes over with a higher token",
        &format!("A's lease runs out at 30 s and worker-B gets it, with token {b_token}."),
        move |n, _| held_token(n, c.b).is_some_and(|t| t > 33),
    );
    setup
        .beat(
            "a-wakes",
            "A wakes up, still sure it holds the lease",
            "The pause ends after 36 s. A carries on with step 2, with token 33.",
            move |_, step| step.kind == EventKind::Resume && step.acted(c.a),
        )
        .ask(
            "A writes step 2 with 33. What does the ledger do?",
            &["Applies it", "Refuses it"],
            1,
            "The ledger has seen B's higher token: WHERE last_token <= 33 matches no row.",
        );
    setup.beat(
        "a-refused",
        "A's write with 33 is refused",
        "The token came out of the grant itself and only grows, so the ledger tells old from new. A stops, and B's job stands.",
        move |n, _| ledger_row(n, c.ledger).is_some_and(|r| r.writes.iter().any(|w| w.worker == c.a && !w.accepted)),
    );
}
