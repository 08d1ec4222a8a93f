//! `#/choose`: four questions lead to a design and the scenario that shows why, then the rules
//! of thumb, each linked to the scenario that breaks when the rule is ignored. Links name
//! scenario ids; the loader fetches whichever bundle holds each one.

use yew::prelude::*;

/// The questions: a name for the radio group, the question, and its answers.
const QUESTIONS: [(&str, &str, &[&str]); 4] = [
    (
        "need",
        "What must be protected?",
        &[
            "One write: a row that two requests update at once",
            "Exclusive time: one worker at a time runs a job or holds a resource",
        ],
    ),
    (
        "token",
        "Can the resource check a token (reject a write that carries an older number)?",
        &[
            "Yes: it is our database or service",
            "No: a third party, a payment rail, a file",
        ],
    ),
    (
        "survive",
        "Must the lock survive the crash of a lock-store node?",
        &[
            "Yes: a failover must never hand it out twice",
            "No: while the store is down the work can wait",
        ],
    ),
    (
        "run",
        "What do you already run?",
        &[
            "Postgres or another SQL database",
            "Redis",
            "etcd, ZooKeeper or Kubernetes",
        ],
    ),
];

/// The advice for a set of answers (indexes into [`QUESTIONS`]; `None` = not answered yet):
/// a headline, why, and the scenario that shows it. `None` while an answer it needs is missing.
pub fn recommend(a: [Option<usize>; 4]) -> Option<(&'static str, &'static str, &'static str)> {
    let [need, token, survive, run] = a;
    if need? == 0 {
        return Some((
            "A conditional update or a row lock — no distributed lock",
            "UPDATE … WHERE version = the one you read, or SELECT … FOR UPDATE in the transaction. The database that holds the row is already the one authority.",
            "lost-update",
        ));
    }
    if token? == 1 {
        return Some((
            "Make the effect idempotent: a deterministic key per operation",
            "No lease stops a paused holder from writing late to a resource that cannot check a token. A key the resource already deduplicates on (an idempotency key) turns the late write into a replay.",
            "unfenceable-resource",
        ));
    }
    Some(match (survive?, run?) {
        (_, 2) => (
            "A lease in etcd, ZooKeeper or a Kubernetes Lease, with fencing",
            "The grant is committed on a majority, so it survives a failover. Use the store's own counter as the token (etcd revision, zxid, leaseTransitions) and check it at the resource.",
            "consensus-lock",
        ),
        (1, 0) => (
            "A lease table with a fencing token, in the database you have",
            "One row per lock with holder, expiry and a token that only grows; the resource rejects older tokens. Keep it on the primary, never a replica.",
            "zombie-worker",
        ),
        (0, 0) => (
            "A lease table on a synchronously replicated primary — or etcd/ZooKeeper",
            "A failover that loses the last committed grant hands the lease out twice. Only a database that commits on a replica before answering keeps it; otherwise put the lease in a consensus store.",
            "lease-placement",
        ),
        (1, _) => (
            "Redis SET NX PX to avoid duplicate work, plus a token the resource checks",
            "Fine for efficiency. For correctness the resource must check a fencing token; a Redis counter is reissued after a failover, so take it from the database.",
            "wrong-release",
        ),
        _ => (
            "Not Redis: a consensus store (etcd or ZooKeeper) for the lock",
            "A single Redis with a replica loses the lock when it fails over, and Redlock bets on clocks. Never use single-instance Redis for correctness.",
            "redis-failover",
        ),
    })
}

/// The rules of thumb and the scenario that breaks without each.
const RULES: [(&str, &str); 12] = [
    (
        "Try not to need a lock: a unique key or a conditional update covers most cases.",
        "lock-alternatives",
    ),
    (
        "Lock the smallest thing: per account, per job key, never one global lock.",
        "lock-granularity",
    ),
    (
        "Check the fencing token at the resource, or a paused holder writes late.",
        "zombie-worker",
    ),
    (
        "Take the token from the store that grants the lease, never a clock or a random id.",
        "fence-mistakes",
    ),
    (
        "Set the TTL against your worst case, and renew as you go.",
        "clock-skew",
    ),
    (
        "Release in a finally, but never depend on it; delete only your own lease.",
        "wrong-release",
    ),
    (
        "Take several locks in one fixed global order, or take only one.",
        "deadlock",
    ),
    (
        "Add jitter to retries, or every waiter wakes at once.",
        "lease-stampede",
    ),
    (
        "Measure takeovers: a rising count means the TTL is too short.",
        "lease-lifecycle",
    ),
    (
        "Test the ugly case: pause the holder past its TTL and check its writes are rejected.",
        "zombie-worker",
    ),
    (
        "Redis is for stopping duplicate work, not for correctness.",
        "redis-failover",
    ),
    (
        "Consensus is for small metadata, not volume: every write goes through one leader.",
        "raft-log-replication",
    ),
];

#[function_component(ChoosePage)]
pub fn choose_page() -> Html {
    let answers = use_state(|| [None::<usize>; 4]);
    let advice = recommend(*answers);
    html! {
        <section class="choose" aria-labelledby="choose-title">
            <h1 id="choose-title">{ "Choosing a design" }</h1>
            <form class="questions" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                { for QUESTIONS.iter().enumerate().map(|(q, (name, question, options))| html! {
                    <fieldset>
                        <legend>{ *question }</legend>
                        { for options.iter().enumerate().map(|(i, label)| {
                            let checked = answers[q] == Some(i);
                            let answers = answers.clone();
                            let onchange = Callback::from(move |_| {
                                let mut next = *answers;
                                next[q] = Some(i);
                                answers.set(next);
                            });
                            html! {
                                <label>
                                    <input type="radio" name={*name} {checked} {onchange} />
                                    { *label }
                                </label>
                            }
                        }) }
                    </fieldset>
                }) }
            </form>
            <div class="recommendation" aria-live="polite">
                { match advice {
                    Some((head, why, id)) => html! {
                        <>
                            <h2>{ "Recommended: " }{ head }</h2>
                            <p>{ why }</p>
                            <a href={format!("#/play/{id}")}>{ format!("See why: the {id} scenario →") }</a>
                        </>
                    },
                    None => html! { <p>{ "Answer the questions above to see a recommendation." }</p> },
                } }
            </div>
            <h2>{ "Rules that keep it working" }</h2>
            <ul class="rules">
                { for RULES.iter().map(|(rule, id)| html! {
                    <li><label><input type="checkbox" />{ *rule }</label>{ " " }
                    <a href={format!("#/play/{id}")}>{ format!("breaks in {id}") }</a></li>
                }) }
                <li><label><input type="checkbox" />{ "Split volume over many consensus groups." }</label>{ " " }
                <a href="#/experiment/consensus-throughput">{ "the throughput chart" }</a></li>
            </ul>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_complete_answer_gets_advice_and_partial_ones_wait() {
        assert!(recommend([None; 4]).is_none());
        assert_eq!(
            recommend([Some(0), None, None, None]).map(|r| r.2),
            Some("lost-update")
        );
        assert_eq!(
            recommend([Some(1), Some(1), None, None]).map(|r| r.2),
            Some("unfenceable-resource")
        );
        assert!(recommend([Some(1), Some(0), Some(0), None]).is_none());
        assert_eq!(
            recommend([Some(1), Some(0), Some(0), Some(1)]).map(|r| r.2),
            Some("redis-failover")
        );
        assert_eq!(
            recommend([Some(1), Some(0), Some(1), Some(2)]).map(|r| r.2),
            Some("consensus-lock")
        );
        for survive in 0..2 {
            for run in 0..3 {
                assert!(recommend([Some(1), Some(0), Some(survive), Some(run)]).is_some());
            }
        }
    }
}
