//! The choosing page says what the simulations show: every combination of answers gets
//! advice, and every run the advice or a rule links to exists, takes its parameters, and
//! (run with seed 1, as the link opens it) shows each claim stated beside the text.

use coordlab_sim::choosing::{recommend, Advice, Evidence, Shows, QUESTIONS, RULES};
use coordlab_sim::properties::Verdict;
use coordlab_sim::scenarios::{find, resolve_params, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest, Trace};

/// Every complete set of answers.
fn every_answer_set() -> Vec<[Option<usize>; 4]> {
    let mut out = vec![[None; 4]];
    for (q, question) in QUESTIONS.iter().enumerate() {
        out = out
            .into_iter()
            .flat_map(|a| {
                (0..question.answers.len()).map(move |i| {
                    let mut next = a;
                    next[q] = Some(i);
                    next
                })
            })
            .collect();
    }
    out
}

fn verdict(t: &Trace, name: &str) -> Option<Verdict> {
    t.properties.iter().find(|p| p.name == name).map(|p| p.verdict)
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("claim value `{text}` is not JSON: {e}"))
}

/// What is wrong with `claim` in `t`; `None` when the run shows it.
fn mismatch(t: &Trace, claim: &Shows) -> Option<String> {
    let got = |key: &str| t.outcome.get(key).cloned();
    let ok = match *claim {
        Shows::Holds(p) => verdict(t, p) == Some(Verdict::Holds),
        Shows::Violated(p) => verdict(t, p) == Some(Verdict::Violated),
        Shows::Outcome(key, value) => got(key) == Some(json(value)),
        Shows::Count(key, n) => got(key)
            .and_then(|v| v.as_array().map(Vec::len))
            .is_some_and(|len| len == n as usize),
        Shows::Contains(key, entry) => got(key)
            .and_then(|v| v.as_array().cloned())
            .is_some_and(|list| list.contains(&json(entry))),
    };
    (!ok).then(|| {
        format!(
            "{claim:?}: the run has outcome {:?} and properties {:?}",
            t.outcome,
            t.properties
                .iter()
                .map(|p| (p.name.clone(), p.verdict.as_str()))
                .collect::<Vec<_>>()
        )
    })
}

/// Runs one piece of evidence and returns what does not match its claims.
fn check(e: &Evidence) -> Vec<String> {
    let where_ = format!("{} ({})", e.link(), e.label);
    let Ok(def) = find(e.scenario) else {
        return vec![format!("{where_}: no scenario `{}`", e.scenario)];
    };
    if e.shows.is_empty() {
        return vec![format!("{where_}: states nothing the run must show")];
    }
    let given: Params = e
        .params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Err(err) = resolve_params(&def.info(), &given) {
        return vec![format!("{where_}: {err}")];
    }
    let plain = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    if !e.params.iter().all(|(k, v)| plain(k) && plain(v)) {
        return vec![format!("{where_}: a parameter would need escaping in the link")];
    }
    let request = RunRequest {
        scenario: e.scenario.to_string(),
        params: given,
        seed: 1,
        actions: Vec::new(),
    };
    let t = run(&request, Limits::default(), Recording::Summary).expect("a valid request runs");
    e.shows
        .iter()
        .filter_map(|c| mismatch(&t, c).map(|m| format!("{where_}: {m}")))
        .collect()
}

#[test]
fn every_complete_set_of_answers_gets_advice_and_an_incomplete_one_waits() {
    let all = every_answer_set();
    assert_eq!(all.len(), 2 * 2 * 2 * 3);
    for answers in &all {
        assert!(recommend(*answers).is_some(), "{answers:?}");
    }
    assert!(recommend([None; 4]).is_none());
    assert!(recommend([Some(1), None, None, None]).is_none());
    assert!(recommend([Some(1), Some(0), Some(0), None]).is_none());
    // The first two answers decide alone where they can.
    assert!(recommend([Some(0), None, None, None]).is_some());
    assert!(recommend([Some(1), Some(1), None, None]).is_some());
}

#[test]
fn every_advice_links_to_runs_that_show_what_it_says() {
    let mut seen: Vec<*const Advice> = Vec::new();
    let mut wrong = Vec::new();
    for answers in every_answer_set() {
        let advice = recommend(answers).unwrap();
        if seen.contains(&(advice as *const Advice)) {
            continue;
        }
        seen.push(advice);
        assert!(!advice.evidence.is_empty(), "{}: no link", advice.head);
        for e in advice.evidence {
            wrong.extend(
                check(e)
                    .into_iter()
                    .map(|m| format!("{answers:?} {}: {m}", advice.head)),
            );
        }
    }
    assert_eq!(seen.len(), 7, "each advice is reached by some answers");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_rule_links_to_a_run_that_shows_it() {
    let wrong: Vec<String> = RULES.iter().flat_map(|r| check(&r.evidence)).collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn with_redis_the_token_comes_from_the_acquiring_script_not_from_elsewhere() {
    // Exclusive time, a resource that checks tokens, no need to survive a failover, Redis.
    let advice = recommend([Some(1), Some(0), Some(1), Some(1)]).unwrap();
    assert!(
        advice.why.contains("in one Lua script that returns the number"),
        "{}",
        advice.why
    );
    assert!(!advice.why.contains("from the database"), "{}", advice.why);
    let links: Vec<String> = advice.evidence.iter().map(Evidence::link).collect();
    assert_eq!(
        links,
        [
            "#/play/token-sources?source=redis-lua",
            "#/play/token-sources?source=redis-lua&failover=yes"
        ]
    );
    // Every advice that speaks of Redis links to a run with Redis in it.
    for answers in every_answer_set() {
        let advice = recommend(answers).unwrap();
        if advice.head.contains("Redis") {
            assert!(
                advice
                    .evidence
                    .iter()
                    .any(|e| e.scenario.starts_with("redis") || e.params.contains(&("source", "redis-lua"))),
                "{}",
                advice.head
            );
        }
    }
}

#[test]
fn the_rules_include_the_network_call_and_tie_the_ttl_to_a_pause_longer_than_it() {
    let rule = |needle: &str| {
        RULES
            .iter()
            .find(|r| r.text.contains(needle))
            .unwrap_or_else(|| panic!("no rule about {needle}"))
    };
    assert_eq!(
        rule("across a network call").evidence.link(),
        "#/play/lock-across-call"
    );
    let ttl = &rule("Set the TTL").evidence;
    let param = |k: &str| {
        ttl.params
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| v.parse::<u64>().unwrap())
    };
    let (ttl_ms, pause_ms) = (param("ttl_ms").unwrap(), param("pause_ms").unwrap());
    assert!(pause_ms > ttl_ms, "the linked run's pause outlasts its TTL");
    assert!(ttl.shows.contains(&Shows::Outcome("max_concurrent_holders", "2")));
}
