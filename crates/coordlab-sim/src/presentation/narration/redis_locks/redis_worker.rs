//! What a worker with a single-primary Redis lock saw as it took, used and gave back its lock,
//! and the sentences it reads as.

use super::redis_job::sends_debit;
use crate::presentation::durations::tenths;
use crate::protocols::lease::lease_msg::ReleaseMode;

/// One thing a Redis worker saw; `me` is the worker's own name.
pub enum RedisWorkerSaw<'a> {
    /// Its first attempt: the job fires and it asks for the lock.
    Fires {
        me: &'a str,
        primary: &'a str,
        value: &'a str,
        fence_key: &'a str,
    },
    AsksAgain {
        me: &'a str,
        primary: &'a str,
        attempt: u32,
        value: &'a str,
    },
    HeldElsewhere {
        me: &'a str,
        retry_ms: u64,
    },
    GotOkSendsWait {
        me: &'a str,
        from: &'a str,
        token: u64,
        replicas: u32,
        timeout_ms: u64,
    },
    Holds {
        me: &'a str,
        from: &'a str,
        token: u64,
        ttl_ms: u64,
    },
    WaitConfirmed {
        me: &'a str,
        acked: u32,
        token: u64,
        ttl_ms: u64,
    },
    WaitShort {
        me: &'a str,
        acked: u32,
        from: &'a str,
    },
    NotPrimary {
        me: &'a str,
        from: &'a str,
        text: &'a str,
    },
    /// A sentinel names a new primary; `working` if it holds the lock and works under it,
    /// otherwise it abandons its unanswered request.
    NewPrimary {
        me: &'a str,
        name: &'a str,
        working: bool,
    },
    ReleaseAnswered {
        me: &'a str,
        deleted: bool,
    },
    NoAnswer {
        me: &'a str,
        primary: &'a str,
    },
    DropsWhileWaiting {
        me: &'a str,
        primary: &'a str,
    },
    DropsBeforeAnswer {
        me: &'a str,
        primary: &'a str,
    },
    DropsWhileWorking {
        me: &'a str,
        primary: &'a str,
    },
    SendsDebit {
        me: &'a str,
        step: u32,
        token: u64,
    },
    Refused {
        me: &'a str,
        step: u32,
    },
    Releases {
        me: &'a str,
        primary: &'a str,
        how: ReleaseMode,
    },
}

impl From<RedisWorkerSaw<'_>> for String {
    fn from(saw: RedisWorkerSaw<'_>) -> String {
        use RedisWorkerSaw::*;
        match saw {
            Fires {
                me,
                primary,
                value,
                fence_key,
            } => format!(
                "{me}'s job fires. It asks {primary} for the lock with a random value of its own, {value}. Redis has no fencing tokens, so the same script also increments the counter `{fence_key}` and hands back its new value as one."
            ),
            AsksAgain {
                me,
                primary,
                attempt,
                value,
            } => format!("{me} asks {primary} for the lock again (attempt {attempt}), as {value}."),
            HeldElsewhere { me, retry_ms } => format!(
                "Someone else holds the lock; {me} will try again in {}.",
                tenths(retry_ms)
            ),
            GotOkSendsWait {
                me,
                from,
                token,
                replicas,
                timeout_ms,
            } => format!(
                "{me} got OK and token {token} from {from}. The key is set and visible there already; {me} sends WAIT {replicas} {timeout_ms}, which only delays its answer until {replicas} replica(s) have the write (or {timeout_ms} ms pass)."
            ),
            Holds {
                me,
                from,
                token,
                ttl_ms,
            } => format!(
                "{me} holds the lock: OK from {from}, token {token}, {} TTL. It starts on the job at once.",
                tenths(ttl_ms)
            ),
            WaitConfirmed {
                me,
                acked,
                token,
                ttl_ms,
            } => format!(
                "WAIT says {acked} replica(s) have the write, so {me} starts the job (token {token}). That makes the lock harder to lose, not safe: a failover may still promote a replica without it, and the key still expires after {} whether the job is done or not.",
                tenths(ttl_ms)
            ),
            WaitShort { me, acked, from } => format!(
                "WAIT says only {acked} replica(s) have the write. The key is still set on {from} — WAIT cannot take it back — so {me} removes it itself and will try again."
            ),
            NotPrimary { me, from, text } => {
                format!("{from} answers {text}: it is not the primary. {me} asks a sentinel.")
            }
            NewPrimary {
                me,
                name,
                working: true,
            } => format!(
                "{me} hears that {name} is the primary now and will send its commands there. Nothing in that news says whether its own lock survived."
            ),
            NewPrimary { me, name, .. } => format!(
                "{me} hears that {name} is the primary now and abandons its unanswered request."
            ),
            ReleaseAnswered { me, deleted } => format!(
                "{me}'s release removed {}; it is done.",
                if deleted { "a key" } else { "nothing" }
            ),
            NoAnswer { me, primary } => format!(
                "{me} gets no answer from {primary}. It cannot tell whether its lock was set, so it treats it as not held and asks a sentinel where the primary is."
            ),
            DropsWhileWaiting { me, primary } => format!(
                "{me}'s connection to {primary} drops while its WAIT is still waiting. Its lock was set, and visible to every client of {primary}, from the moment of the OK; WAIT only reports how far replication got and could never have taken it back. Did a replica get it? {me} cannot know, so it does not act on it."
            ),
            DropsBeforeAnswer { me, primary } => format!(
                "{me}'s connection to {primary} drops before the answer came. Was the lock set? It cannot know, so it does not act on it."
            ),
            DropsWhileWorking { me, primary } => format!(
                "{me}'s connection to {primary} drops. It carries on working: its lock is a key in {primary}'s memory, and nothing tells it whether the replica that takes over will have that key."
            ),
            SendsDebit { me, step, token } => sends_debit(
                me,
                step,
                format_args!(" with token {token} in its WHERE clause."),
            ),
            Refused { me, step } => format!(
                "The ledger refused {me}'s step {step}: a higher token has written there, so another holder exists. It stops."
            ),
            Releases { me, primary, how } => format!(
                "{me} is done with the job and releases the lock on {primary} with {}.",
                match how {
                    ReleaseMode::NaiveDelete => "DEL",
                    ReleaseMode::CompareAndDelete => {
                        "the release script (delete only if the value is still mine)"
                    }
                }
            ),
        }
    }
}
