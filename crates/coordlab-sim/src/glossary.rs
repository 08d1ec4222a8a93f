//! The glossary: the terms the narration uses, each with a one-line definition and the
//! scenario that shows it best. The player links the first use of a term in a run to its
//! definition; the glossary page lists them all.
//!
//! Matching is by whole words: a match may not start or end inside a word, and a hyphen joins
//! words (so `lease` does not match inside the node name `lease-store`). A pattern written
//! all in lower case matches in any case; a pattern with a capital letter matches exactly as
//! written, so the Redis command `WAIT` is not the verb "wait".
//!
//! This module ships in every browser bundle: a static table and a scan that allocates only
//! the list of first uses it returns. The definitions and the scenario links are only where
//! the `definitions` feature is on (natively, and in the library's bundle); the player
//! fetches the definitions from `glossary.json`, which `cargo xtask dist` writes.

/// One glossary entry.
#[derive(Debug)]
pub struct Term {
    /// The term as the glossary page titles it.
    pub name: &'static str,
    /// What matches it in narration, `|`-separated (see the module doc for the case rule).
    pub words: &'static str,
    /// One line, in our words ("" without the `definitions` feature).
    pub definition: &'static str,
    /// The scenario that shows it best, with parameters if not the defaults:
    /// `id` or `id?key=value&…` ("" without the `definitions` feature).
    pub shows: &'static str,
}

impl Term {
    /// What matches the term, longest first where one contains another.
    pub fn words(&self) -> impl Iterator<Item = &'static str> {
        self.words.split('|')
    }
    /// The scenario's id.
    pub fn scenario(&self) -> &'static str {
        self.shows.split('?').next().unwrap_or(self.shows)
    }
    /// The scenario's parameters, `key=value&…` (empty for the defaults).
    pub fn params(&self) -> &'static str {
        self.shows.split_once('?').map_or("", |(_, p)| p)
    }
}

const fn term(
    name: &'static str,
    words: &'static str,
    definition: &'static str,
    shows: &'static str,
) -> Term {
    // Without `definitions` the two texts are dropped here, at compile time, so they are not
    // in the build at all (a player fetches the definitions: `glossary.json`).
    if cfg!(feature = "definitions") {
        Term {
            name,
            words,
            definition,
            shows,
        }
    } else {
        Term {
            name,
            words,
            definition: "",
            shows: "",
        }
    }
}

/// Every term, in alphabetical order of `name` (ignoring case).
pub static TERMS: &[Term] = &[
    term(
        "Advisory lock",
        "advisory lock|advisory locks",
        "A PostgreSQL lock on a number the application picks, not on a row: held to the end of the transaction or, in session scope, until unlocked or the connection closes.",
        "advisory-locks",
    ),
    term(
        "AppendEntries",
        "AppendEntries|append entries",
        "The Raft leader's message to followers: new log entries (none in a heartbeat) and how far the log is committed.",
        "raft-log-replication",
    ),
    term(
        "Back off",
        "back off|backs off|backoff",
        "Wait a while before asking again, so that many waiting clients do not hammer a busy server all at once.",
        "lease-stampede",
    ),
    term(
        "Candidate",
        "candidate|candidates",
        "A Raft server standing for election: it has moved to a new term, voted for itself and asks the others for their votes.",
        "raft-election",
    ),
    term(
        "Clock drift",
        "clock drift|drift|drifts",
        "A clock running a little fast or slow, so two machines' ideas of \"30 seconds from now\" come apart over time.",
        "clock-skew",
    ),
    term(
        "Commit (Raft)",
        "commits up to",
        "A Raft entry is committed once its leader sees a majority store it: no later leader can lose it, so it is safe to apply.",
        "raft-log-replication",
    ),
    term(
        "Deadlock",
        "deadlock|deadlocks",
        "Transactions each waiting for a lock another holds; the database must abort one.",
        "deadlock",
    ),
    term(
        "Election timeout",
        "election timeout|election timeouts",
        "How long a Raft follower waits without hearing a leader before it stands for election; drawn at random per server.",
        "raft-election",
    ),
    term(
        "Ephemeral sequential node",
        "ephemeral sequential|ephemeral|sequential",
        "A ZooKeeper node numbered in creation order that vanishes when its owner's session ends: a queue of lock waiters.",
        "zookeeper-lock",
    ),
    term(
        "Failover",
        "failover|failovers",
        "Replacing a primary that seems dead by promoting one of its replicas; whatever the replica had not yet received is lost.",
        "redis-failover",
    ),
    term(
        "Fencing token",
        "fencing token|fencing tokens|token|tokens",
        "A number that grows with every grant of a lock; the resource refuses a write whose number is below one it has seen.",
        "zombie-worker",
    ),
    term(
        "Follower",
        "follower|followers",
        "The normal, passive Raft role: answer the leader and candidates, and stand for election only if the leader goes quiet.",
        "raft-election",
    ),
    term(
        "Heartbeat",
        "heartbeat|heartbeats",
        "A small message sent on a timer just to say \"still here\", like a Raft leader's empty AppendEntries.",
        "raft-election",
    ),
    term(
        "Leader",
        "leader|leaders",
        "The one Raft server of a term that accepts requests and decides the order of the log; the others copy it.",
        "raft-election",
    ),
    term(
        "Lease",
        "lease|leases",
        "A lock that lapses on its own after a set time unless renewed, so a holder that dies cannot block everyone forever.",
        "lease-lifecycle",
    ),
    term(
        "Lock-delay (Chubby)",
        "lock-delay",
        "After a holder's session dies without releasing, the time the lock server refuses the lock to everyone, so stray requests drain.",
        "chubby-sequencer",
    ),
    term(
        "Lost update",
        "lost update|lost updates",
        "Two read-modify-write cycles overlap and the second write replaces the first, as if the first had never happened.",
        "lost-update",
    ),
    term(
        "Majority (quorum)",
        "majority|quorum|quorums",
        "More than half of the servers. Any two majorities share a server, so a cluster can agree without hearing from all.",
        "raft-quorum",
    ),
    term(
        "Network partition",
        "partition|partitions",
        "The network splits into groups that cannot reach each other, while every machine keeps running.",
        "raft-partition",
    ),
    term(
        "PSYNC",
        "PSYNC",
        "A Redis replica's request to its primary: send me what I am missing since this point, or a full copy if that is too far back.",
        "redis-failover",
    ),
    term(
        "Redlock",
        "redlock",
        "A Redis lock taken on a majority of independent masters, trusted only for a time budget measured on the client's own clock.",
        "redlock",
    ),
    term(
        "Renewal",
        "renew|renews|renewal|renewals|renewed",
        "The holder of a lease extending it before it runs out; if renewals stop arriving, the lease lapses.",
        "lease-lifecycle",
    ),
    term(
        "REPLCONF ACK",
        "REPLCONF",
        "A Redis replica's periodic note to its primary saying how far through the replication stream it has got.",
        "redis-failover",
    ),
    term(
        "Replica",
        "replica|replicas",
        "A copy of a primary's data, kept up to date by a stream of the primary's writes — usually a little behind.",
        "redis-failover",
    ),
    term(
        "Replication lag",
        "replication lag",
        "How far a replica trails its primary: a read there can show a row as it was seconds ago.",
        "lease-placement?store=read-replica",
    ),
    term(
        "RequestVote",
        "RequestVote|request vote",
        "A Raft candidate's ballot request, carrying its term and how far its log goes, so a voter can refuse a candidate that is behind.",
        "raft-election",
    ),
    term(
        "Revision (etcd)",
        "revision|revisions",
        "A number etcd stamps on every change to the store; the revision that granted a lock serves as its fencing token.",
        "consensus-lock",
    ),
    term(
        "Row lock (SELECT … FOR UPDATE)",
        "FOR UPDATE",
        "A read that also locks the row until the transaction ends, so a second reader waits instead of reading a value about to change.",
        "lost-update?lock=row-lock",
    ),
    term(
        "Sentinel",
        "sentinel|sentinels",
        "The Redis process that watches a primary and, if it stops answering, promotes a replica and tells clients where to go.",
        "redis-failover",
    ),
    term(
        "Sequencer (Chubby)",
        "sequencer|sequencers",
        "Chubby's fencing token: the lock's name, its mode and a generation number that grows with every grant.",
        "chubby-sequencer",
    ),
    term(
        "Session (ZooKeeper)",
        "session|sessions",
        "A client's connection to ZooKeeper, kept alive by pings; when it expires, every ephemeral node the client made is deleted.",
        "zookeeper-lock",
    ),
    term(
        "SET NX",
        "SET NX|NX",
        "The Redis way to take a lock: write the key only if it does not exist yet (usually with an expiry, PX).",
        "redis-failover",
    ),
    term(
        "SKIP LOCKED",
        "SKIP LOCKED",
        "Leave locked rows out: each worker takes a row nobody holds.",
        "skip-locked-queue",
    ),
    term(
        "Stop-the-world pause",
        "stop-the-world pause|stop-the-world|GC pause",
        "A process frozen as a whole (a garbage collector, a swapped-out VM): it does nothing, then carries on as if no time had passed.",
        "zombie-worker",
    ),
    term(
        "Synchronous replication",
        "synchronous standby|synchronous replication",
        "The primary confirms a commit only once a standby holds it too, so a promoted standby lacks no confirmed write.",
        "token-sources?failover=yes",
    ),
    term(
        "Term (Raft)",
        "term|terms",
        "Raft's election counter: each election starts a new term, and messages from an older term are refused.",
        "raft-election",
    ),
    term(
        "Transaction",
        "transaction|transactions",
        "A group of database reads and writes that takes effect all at once at COMMIT, or not at all.",
        "lost-update",
    ),
    term(
        "TTL",
        "ttl",
        "Time to live: how long a lease or key lasts before it expires on its own.",
        "lease-lifecycle",
    ),
    term(
        "Up-to-date log",
        "up to date|up-to-date",
        "Raft's voting rule: vote only for a candidate whose log ends in a later term than yours, or the same term and at least as long.",
        "raft-election",
    ),
    term(
        "Version check (optimistic concurrency)",
        "version|versions|version number",
        "Write only if the row's version is still the one you read; a write that lost the race fails instead of overwriting.",
        "lost-update?lock=conditional-update",
    ),
    term(
        "WAIT",
        "WAIT",
        "A Redis command that waits until N replicas confirm the writes so far. It reports; it cannot undo a write.",
        "redis-failover?wait=wait-1",
    ),
    term(
        "Watch (ZooKeeper)",
        "its watch|a watch",
        "A one-time request to be told when a ZooKeeper node changes or goes; a lock waiter watches the node just ahead.",
        "zookeeper-lock",
    ),
    term(
        "Watchdog (Redisson)",
        "watchdog",
        "A thread in the lock holder's process that keeps renewing the lock while the process runs, whether or not its work is moving.",
        "redisson-watchdog",
    ),
];

/// A set of terms, by index into [`TERMS`] (there are fewer than 64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TermSet(u64);

impl TermSet {
    pub fn contains(self, term: usize) -> bool {
        self.0 >> term & 1 == 1
    }
    pub fn insert(&mut self, term: usize) {
        self.0 |= 1 << term;
    }
    pub fn is_full(self) -> bool {
        self.0.count_ones() as usize == TERMS.len()
    }
}

/// A first use of a term in a text: bytes `start..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Use {
    pub start: usize,
    pub end: usize,
    pub term: usize,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Whether `pattern` matches `text` at byte `at` as whole words.
fn matches_at(text: &[u8], at: usize, pattern: &str) -> bool {
    let p = pattern.as_bytes();
    let Some(found) = text.get(at..at + p.len()) else {
        return false;
    };
    let exact = p.iter().any(u8::is_ascii_uppercase);
    let same = if exact {
        found == p
    } else {
        found.eq_ignore_ascii_case(p)
    };
    same && !text.get(at + p.len()).copied().is_some_and(is_word)
}

/// The longest match of any term at `at` (a word start): (term, end). A run's narration has
/// tens of thousands of word starts, so a pattern is looked at only when its first letter is
/// the word's (splitting every term's patterns at each word start made marking a 2,000-event
/// run's first uses cost about 80 ms in the browser).
fn longest_at(text: &[u8], at: usize) -> Option<(usize, usize)> {
    let first = text[at].to_ascii_lowercase();
    let mut best: Option<(usize, usize)> = None;
    for (t, term) in TERMS.iter().enumerate() {
        let words = term.words.as_bytes();
        let mut start = 0;
        while start < words.len() {
            let end = words[start..]
                .iter()
                .position(|&b| b == b'|')
                .map_or(words.len(), |n| start + n);
            if words[start].to_ascii_lowercase() == first {
                let w = &term.words[start..end];
                if best.is_none_or(|(_, e)| at + w.len() > e) && matches_at(text, at, w) {
                    best = Some((t, at + w.len()));
                }
            }
            start = end + 1;
        }
    }
    best
}

/// The first uses in `text` of terms not in `introduced`, in order; each is added to
/// `introduced`, so feeding a run's texts in order marks each term once.
pub fn first_uses(text: &str, introduced: &mut TermSet) -> Vec<Use> {
    let bytes = text.as_bytes();
    let mut uses = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = is_word(bytes[i]) && (i == 0 || !is_word(bytes[i - 1]));
        if !starts_word {
            i += 1;
            continue;
        }
        match longest_at(bytes, i) {
            Some((term, end)) => {
                if !introduced.contains(term) {
                    introduced.insert(term);
                    uses.push(Use { start: i, end, term });
                }
                i = end;
            }
            None => {
                // Skip to the end of this word.
                while i < bytes.len() && is_word(bytes[i]) {
                    i += 1;
                }
            }
        }
    }
    uses
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::{self, Params, RunRequest};
    use crate::{Limits, Recording};

    fn index(name: &str) -> usize {
        TERMS.iter().position(|t| t.name == name).unwrap()
    }

    fn marked(text: &str) -> Vec<&str> {
        first_uses(text, &mut TermSet::default())
            .iter()
            .map(|u| &text[u.start..u.end])
            .collect()
    }

    #[test]
    fn matching_is_whole_word_and_case_insensitive() {
        assert_eq!(marked("The LEASE lapses"), ["LEASE"]);
        assert_eq!(marked("Append Entries from S1"), ["Append Entries"]);
        assert_eq!(
            marked("a leaseholder on lease-store, a release"),
            Vec::<&str>::new()
        );
        assert_eq!(marked("leased, or terminal, or midterm"), Vec::<&str>::new());
        assert_eq!(marked("(lease)."), ["lease"]);
        assert_eq!(marked("₹100 in term 2"), ["term"]);
        // A pattern with capitals matches only as written: the command, not the verb.
        assert_eq!(marked("messages wait; it sends WAIT 1 1000"), ["WAIT"]);
        assert_eq!(marked("for update, FOR UPDATE"), ["FOR UPDATE"]);
        // The longest pattern wins: one link for "fencing token", none for its "token".
        assert_eq!(marked("its fencing token, token 33"), ["fencing token"]);
        assert_eq!(marked("SET lock a NX PX 30000"), ["NX"]);
    }

    #[test]
    fn only_the_first_use_in_a_run_is_marked() {
        let mut seen = TermSet::default();
        let first = "S1 is leader of term 2; the leader sends heartbeats.";
        let uses = first_uses(first, &mut seen);
        let names: Vec<&str> = uses.iter().map(|u| TERMS[u.term].name).collect();
        assert_eq!(names, ["Leader", "Term (Raft)", "Heartbeat"]);
        assert_eq!(&first[uses[0].start..uses[0].end], "leader");
        let second = "A heartbeat from the new leader, term 3, a Lease.";
        let uses = first_uses(second, &mut seen);
        assert_eq!(uses.len(), 1, "only the lease is new");
        assert_eq!(uses[0].term, index("Lease"));
        assert!(seen.contains(index("Leader")) && seen.contains(index("Lease")));
    }

    #[test]
    fn the_table_is_sorted_small_and_well_formed() {
        assert!(TERMS.len() <= 64, "a TermSet holds at most 64 terms");
        for pair in TERMS.windows(2) {
            assert!(
                pair[0].name.to_lowercase() < pair[1].name.to_lowercase(),
                "{} before {}",
                pair[0].name,
                pair[1].name
            );
        }
        for t in TERMS {
            assert!(
                !t.words.is_empty() && t.words().all(|w| !w.is_empty()),
                "{}",
                t.name
            );
            assert!(t.definition.len() <= 200, "{} has a one-line definition", t.name);
            assert!(t.words.is_ascii(), "{}", t.name);
        }
    }

    #[test]
    fn every_terms_scenario_exists() {
        for t in TERMS {
            let def = scenarios::find(t.scenario())
                .unwrap_or_else(|_| panic!("{}: no scenario {}", t.name, t.scenario()));
            let info = def.info();
            for pair in t.params().split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap();
                let mut one = Params::new();
                one.insert(k.into(), v.into());
                scenarios::resolve_params(&info, &one).unwrap_or_else(|e| panic!("{}: {e}", t.name));
            }
        }
    }

    /// Terms that only events without narration use (stepping with "all events" shows them).
    const ONLY_IN_ALL_EVENTS: &[&str] = &["REPLCONF ACK"];

    /// No dead terms: each is used in its scenario's run, in an entry the player narrates
    /// (one with notes, a fault or a broken property), so stepping reaches the link.
    #[test]
    fn every_term_is_used_in_its_scenarios_narration() {
        for (i, t) in TERMS.iter().enumerate() {
            let any_entry = ONLY_IN_ALL_EVENTS.contains(&t.name);
            let mut params = Params::new();
            for pair in t.params().split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap();
                params.insert(k.into(), v.into());
            }
            let request = RunRequest {
                scenario: t.scenario().into(),
                params,
                seed: 1,
                actions: Vec::new(),
            };
            let trace = scenarios::run(&request, Limits::default(), Recording::Lines).unwrap();
            let mut seen = TermSet::default();
            for e in &trace.entries {
                if !any_entry && e.notes.is_empty() && e.fault.is_none() && e.violations.is_empty() {
                    continue;
                }
                first_uses(&e.text, &mut seen);
                for n in &e.notes {
                    first_uses(n, &mut seen);
                }
            }
            assert!(seen.contains(i), "“{}” is never narrated in {}", t.name, t.shows);
        }
    }
}
