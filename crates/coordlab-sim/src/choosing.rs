//! The choosing page's decision table, as data: four questions, the advice each set of answers
//! gets, and the rules of thumb. Every piece of advice and every rule links to runs that show
//! what its text says, and states what those runs must show ([`Shows`]), so a native test
//! (`tests/choosing.rs`) can run each link and check the text against the simulation.
//!
//! Plain data only: the `choosing` browser bundle renders it without any simulation (no
//! scenario setup is reachable from here).

/// One question of the page: a name for its radio group, the question, its answers.
pub struct Question {
    pub name: &'static str,
    pub text: &'static str,
    pub answers: &'static [&'static str],
}

/// A claim about a run, checkable against its trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shows {
    /// The property holds for the whole run.
    Holds(&'static str),
    /// The property is violated.
    Violated(&'static str),
    /// The outcome field has exactly this value (JSON text).
    Outcome(&'static str, &'static str),
    /// The outcome field is a list of this many entries.
    Count(&'static str, u32),
    /// The outcome field is a list with an entry equal to this one (JSON text).
    Contains(&'static str, &'static str),
}

/// A run that shows a piece of advice or a rule: a scenario with some parameters (the rest at
/// their defaults, seed 1 as a link without one gets), what the link says it shows, and the
/// claims that make that true.
pub struct Evidence {
    pub scenario: &'static str,
    pub params: &'static [(&'static str, &'static str)],
    pub label: &'static str,
    pub shows: &'static [Shows],
}

impl Evidence {
    /// The player's link to this run. Parameter values are plain words and numbers, so they
    /// need no escaping (the native test checks that).
    pub fn link(&self) -> String {
        let query: Vec<String> = self.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if query.is_empty() {
            format!("#/play/{}", self.scenario)
        } else {
            format!("#/play/{}?{}", self.scenario, query.join("&"))
        }
    }
}

/// What the page recommends for a set of answers.
pub struct Advice {
    pub head: &'static str,
    pub why: &'static str,
    pub evidence: &'static [Evidence],
}

/// A rule of thumb and the run that shows it.
pub struct Rule {
    pub text: &'static str,
    pub evidence: Evidence,
}

pub const QUESTIONS: [Question; 4] = [
    Question {
        name: "need",
        text: "What must be protected?",
        answers: &[
            "One write: a row that two requests update at once",
            "Exclusive time: one worker at a time runs a job or holds a resource",
        ],
    },
    Question {
        name: "token",
        text: "Can the resource check a token (reject a write that carries an older number)?",
        answers: &[
            "Yes: it is our database or service",
            "No: a third party, a payment rail, a file",
        ],
    },
    Question {
        name: "survive",
        text: "Must the lock survive the crash of a lock-store node?",
        answers: &[
            "Yes: a failover must never hand it out twice",
            "No: while the store is down the work can wait",
        ],
    },
    Question {
        name: "run",
        text: "What do you already run?",
        answers: &[
            "Postgres or another SQL database",
            "Redis",
            "etcd, ZooKeeper or Kubernetes",
        ],
    },
];

const CONSENSUS_SURVIVES: Evidence = Evidence {
    scenario: "consensus-lock",
    params: &[],
    label: "etcd: the grant survives the leader's crash, and the paused holder's write is refused",
    shows: &[
        Shows::Outcome("first_grant_survived_failover", "true"),
        Shows::Outcome("stale_write_rejected", "true"),
        Shows::Holds("tokens-increase"),
        Shows::Holds("fence-monotonic"),
    ],
};

const ONE_WRITE: Advice = Advice {
    head: "A conditional update or a row lock — no distributed lock",
    why: "UPDATE … WHERE version = the one you read (zero rows: read again and retry), or SELECT … FOR UPDATE in the transaction. The database that holds the row is already the one authority.",
    evidence: &[
        Evidence {
            scenario: "lost-update",
            params: &[("lock", "conditional-update")],
            label: "with a conditional update both debits land",
            shows: &[Shows::Holds("no-lost-update"), Shows::Outcome("balance", "40")],
        },
        Evidence {
            scenario: "lost-update",
            params: &[("lock", "none")],
            label: "without either, one debit is lost",
            shows: &[Shows::Violated("no-lost-update"), Shows::Outcome("balance", "70")],
        },
    ],
};

const UNFENCEABLE: Advice = Advice {
    head: "Make the effect idempotent: a key per operation, derived from the job",
    why: "No lease stops a paused holder from writing late to a resource that cannot check a token. A key the resource deduplicates on (an idempotency key) turns the late write into a replay; reconcile afterwards for whatever still slips through.",
    evidence: &[
        Evidence {
            scenario: "unfenceable-resource",
            params: &[("idempotency_key", "on")],
            label: "with a key the zombie's payment is recognised as a replay",
            shows: &[
                Shows::Holds("no-double-payment"),
                Shows::Outcome("replays_recognised", "1"),
            ],
        },
        Evidence {
            scenario: "unfenceable-resource",
            params: &[("idempotency_key", "off")],
            label: "without one it is paid twice",
            shows: &[Shows::Violated("no-double-payment")],
        },
    ],
};

const CONSENSUS: Advice = Advice {
    head: "A lease in etcd, ZooKeeper or a Kubernetes Lease, with a fencing token",
    why: "The grant is committed on a majority, so it survives a failover. Take the token from the grant itself — etcd's revision of your key, the czxid of your ZooKeeper lock node, a Lease's leaseTransitions — and check it at the resource. client-go's leader election does not fence by itself, and it times the lease on each client's clock.",
    evidence: &[CONSENSUS_SURVIVES],
};

const LEASE_TABLE: Advice = Advice {
    head: "A lease table with a fencing token, in the database you have",
    why: "One row per lock: holder, expiry and a counter. The statement that grants the lease returns the token (INSERT … ON CONFLICT … RETURNING fence_token); a renewal keeps it; every write carries it in its WHERE clause. Keep the table on the primary, never a replica.",
    evidence: &[
        Evidence {
            scenario: "zombie-worker",
            params: &[("fencing", "write-predicate")],
            label: "the token in the write's WHERE clause refuses the paused holder",
            shows: &[
                Shows::Count("rejected_writes", 1),
                Shows::Holds("no-double-debit"),
                Shows::Holds("fence-monotonic"),
            ],
        },
        Evidence {
            scenario: "lease-placement",
            params: &[("store", "read-replica")],
            label: "a lagging replica grants the lease twice",
            shows: &[Shows::Violated("one-grant"), Shows::Outcome("max_concurrent_holders", "2")],
        },
    ],
};

const SYNC_PRIMARY: Advice = Advice {
    head: "A lease table on a synchronously replicated primary — or a lease in etcd or ZooKeeper",
    why: "With asynchronous replication a failover can lose the last grant and hand the lease, and its token, out again. A primary that waits for a standby before it answers (synchronous_standby_names set) keeps both; otherwise put the lease in a consensus store.",
    evidence: &[
        Evidence {
            scenario: "token-sources",
            params: &[("source", "lease-table"), ("failover", "yes")],
            label: "a replica that already holds the grant takes over: the next token is new",
            shows: &[Shows::Holds("tokens-unique"), Shows::Holds("no-double-debit")],
        },
        CONSENSUS_SURVIVES,
    ],
};

const REDIS_TOKEN: Advice = Advice {
    head: "Redis SET NX PX for duplicate work; for correctness, a token from the same script",
    why: "Redis has no token of its own. Take the lock and INCR a counter in one Lua script that returns the number: a counter read by a separate command can interleave with another worker's grant. The resource rejects older numbers. The counter is only as durable as Redis: a failover, or a restart that loses recent writes, hands a number out twice.",
    evidence: &[
        Evidence {
            scenario: "token-sources",
            params: &[("source", "redis-lua")],
            label: "one script grants the lock and its token: the paused holder is refused",
            shows: &[Shows::Holds("tokens-unique"), Shows::Holds("no-double-debit")],
        },
        Evidence {
            scenario: "token-sources",
            params: &[("source", "redis-lua"), ("failover", "yes")],
            label: "after a failover the same number goes to a second holder",
            shows: &[Shows::Violated("tokens-unique"), Shows::Violated("no-double-debit")],
        },
    ],
};

const NOT_REDIS: Advice = Advice {
    head: "Not Redis: a consensus store (etcd or ZooKeeper) for the lock",
    why: "Redis replicates asynchronously: a failover can promote a replica that never saw the lock, and a second worker takes it — with the same token, if the counter lived there too. WAIT does not change that, and Redlock bets on clocks.",
    evidence: &[
        Evidence {
            scenario: "redis-failover",
            params: &[],
            label: "the primary dies before replicating: two holders, one token",
            shows: &[
                Shows::Outcome("lock_lost", "true"),
                Shows::Outcome("max_concurrent_holders", "2"),
                Shows::Violated("tokens-increase"),
            ],
        },
        CONSENSUS_SURVIVES,
    ],
};

/// The advice for a set of answers (indexes into [`QUESTIONS`]' answers; `None` = not
/// answered yet). `None` while an answer it depends on is missing.
pub fn recommend(answers: [Option<usize>; 4]) -> Option<&'static Advice> {
    let [need, token, survive, run] = answers;
    if need? == 0 {
        return Some(&ONE_WRITE);
    }
    if token? == 1 {
        return Some(&UNFENCEABLE);
    }
    Some(match (survive?, run?) {
        (_, 2) => &CONSENSUS,
        (1, 0) => &LEASE_TABLE,
        (_, 0) => &SYNC_PRIMARY,
        (1, _) => &REDIS_TOKEN,
        _ => &NOT_REDIS,
    })
}

/// The rules of thumb (curriculum §8–9), each with a run that shows it.
pub const RULES: &[Rule] = &[
    Rule {
        text: "Try not to need a lock: a unique key or a conditional update covers most cases.",
        evidence: Evidence {
            scenario: "lock-alternatives",
            params: &[("method", "unique-constraint")],
            label: "a unique key: one copy runs, no lock",
            shows: &[Shows::Outcome("max_concurrent_holders", "1"), Shows::Holds("no-double-debit")],
        },
    },
    Rule {
        text: "Lock the smallest thing: per account, per job key, never one global lock.",
        evidence: Evidence {
            scenario: "lock-granularity",
            params: &[("index", "no")],
            label: "too wide a lock: an unrelated update waits",
            shows: &[Shows::Outcome("support_waited", "true")],
        },
    },
    Rule {
        text: "Check the fencing token at the resource, or a paused holder writes late.",
        evidence: Evidence {
            scenario: "zombie-worker",
            params: &[("fencing", "none")],
            label: "nothing checks the token: a step is debited twice",
            shows: &[Shows::Violated("no-double-debit"), Shows::Violated("fence-monotonic")],
        },
    },
    Rule {
        text: "Take the token out of the acquisition itself, never from a clock, a random id or a second read.",
        evidence: Evidence {
            scenario: "fence-mistakes",
            params: &[("fence", "reread-token")],
            label: "a token read again later lets the zombie's write land",
            shows: &[Shows::Violated("no-stale-write"), Shows::Violated("no-double-debit")],
        },
    },
    Rule {
        text: "Set the TTL against your worst case, GC pauses included, and renew as you go.",
        evidence: Evidence {
            scenario: "zombie-worker",
            params: &[("ttl_ms", "30000"), ("pause_ms", "36000")],
            label: "a 36 s GC pause outlasts a 30 s TTL: two holders",
            shows: &[Shows::Outcome("max_concurrent_holders", "2"), Shows::Violated("no-double-debit")],
        },
    },
    Rule {
        text: "Do not hold a lock across a network call: someone else's slowest answer becomes your lock's duration.",
        evidence: Evidence {
            scenario: "lock-across-call",
            params: &[],
            label: "a slow remote call outlives the lease: paid twice",
            shows: &[Shows::Outcome("payments_sent", "2"), Shows::Violated("no-double-payment")],
        },
    },
    Rule {
        text: "Release in a finally, but never depend on it; delete only your own lease.",
        evidence: Evidence {
            scenario: "wrong-release",
            params: &[("release", "naive-delete")],
            label: "a late DELETE frees the next holder's lease",
            shows: &[Shows::Violated("no-overlapping-grants"), Shows::Outcome("overlapping_grants", "1")],
        },
    },
    Rule {
        text: "Take several locks in one fixed global order, or take only one.",
        evidence: Evidence {
            scenario: "deadlock",
            params: &[("order", "opposite")],
            label: "opposite orders: a deadlock and a retry",
            shows: &[Shows::Outcome("deadlocks", "1")],
        },
    },
    Rule {
        text: "Add jitter to retries, or every waiter wakes at once.",
        evidence: Evidence {
            scenario: "lease-stampede",
            params: &[("jitter", "off"), ("waiters", "5")],
            label: "no jitter: all five waiters ask in the same instant",
            shows: &[Shows::Outcome("peak_requests_per_bucket", "5")],
        },
    },
    Rule {
        text: "Measure takeovers: a lease that expired unreleased, a rising count, means a crash or a TTL too short.",
        evidence: Evidence {
            scenario: "lease-lifecycle",
            params: &[],
            label: "a lease expires unreleased and B takes over",
            shows: &[Shows::Contains("grants", r#"{"kind":"takeover","token":2,"worker":"worker-B"}"#)],
        },
    },
    Rule {
        text: "Test the ugly case: pause the holder past its TTL and check its writes are rejected.",
        evidence: Evidence {
            scenario: "zombie-worker",
            params: &[("fencing", "write-predicate")],
            label: "paused past its TTL, A's write is refused",
            shows: &[Shows::Count("rejected_writes", 1), Shows::Holds("no-double-debit")],
        },
    },
    Rule {
        text: "Redis is for stopping duplicate work, not for correctness.",
        evidence: Evidence {
            scenario: "redis-failover",
            params: &[],
            label: "a failover loses the lock",
            shows: &[Shows::Outcome("lock_lost", "true"), Shows::Violated("one-holder-per-store")],
        },
    },
];
