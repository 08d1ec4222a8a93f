//! Every scenario and variant promises something checkable: a declared expectation with at
//! least one outcome field or property verdict. A variant that declares nothing would pass
//! its scenario check whatever the run did.

use coordlab_sim::scenarios::{expectation_for, registry, resolve_params, ParamKind, Params};
use coordlab_sim::{run, Limits, Recording, RunRequest};

#[test]
fn every_scenario_and_variant_declares_an_expectation() {
    let mut empty = Vec::new();
    for def in registry() {
        let info = def.info();
        let mut variants: Vec<Params> = vec![Params::new()];
        for p in &info.params {
            if let ParamKind::Choice { options } = &p.kind {
                for o in options.iter().filter(|o| o.value != p.default) {
                    variants.push([(p.key.to_string(), o.value.to_string())].into_iter().collect());
                }
            }
        }
        for given in variants {
            let params = resolve_params(&info, &given).expect("declared options are valid");
            let e = (def.expectation)(&params);
            if e.outcome.is_empty() && e.verdicts.is_empty() {
                empty.push(format!("{} {:?}", info.id, given));
            }
        }
    }
    assert!(
        empty.is_empty(),
        "variants that declare no expectation: {empty:#?}"
    );
}

/// A small seeded generator (xorshift), the same draws on every machine.
fn draw(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// A scenario's expectation is what `coordlab run` and `coordlab check` hold a run to, for any
/// parameters a user sets. So across random settings of every parameter within its range
/// (each left at its default a third of the time) and two seeds, no run may miss it: where
/// the timing decides, an expectation must promise nothing rather than guess.
#[test]
fn every_scenario_meets_its_expectation_across_random_parameters() {
    const SETTINGS: usize = 150;
    let mut missed = Vec::new();
    for def in registry() {
        let info = def.info();
        let mut state = 0x9e37_79b9_7f4a_7c15;
        let mut settings = Vec::new();
        for _ in 0..SETTINGS {
            let mut given = Params::new();
            for p in &info.params {
                let value = match &p.kind {
                    ParamKind::Choice { options } => options
                        [(draw(&mut state) % options.len() as u64) as usize]
                        .value
                        .to_string(),
                    ParamKind::Int { min, max, .. } => {
                        if draw(&mut state).is_multiple_of(3) {
                            continue;
                        }
                        (min + (draw(&mut state) % (max - min + 1) as u64) as i64).to_string()
                    }
                };
                given.insert(p.key.to_string(), value);
            }
            settings.push(given);
        }
        missed.extend(misses(info.id, &settings));
    }
    assert!(
        missed.is_empty(),
        "{} runs missed their expectation: {missed:#?}",
        missed.len()
    );
}

/// Runs `scenario` at each of `settings` with two seeds; the runs that missed their
/// expectation.
fn misses(scenario: &str, settings: &[Params]) -> Vec<String> {
    let mut missed = Vec::new();
    for params in settings {
        for seed in 0..2 {
            let request = RunRequest {
                scenario: scenario.to_string(),
                params: params.clone(),
                seed,
                actions: vec![],
            };
            let trace = run(&request, Limits::default(), Recording::Summary).expect("valid request");
            let miss = expectation_for(&request)
                .expect("valid request")
                .mismatches(&trace);
            if !miss.is_empty() {
                missed.push(format!("{scenario} seed {seed} {params:?}: {miss:?}"));
            }
        }
    }
    missed
}

/// The parameters `timings` (in ms) with the choices `choices`.
fn params_of(choices: &[(&str, &str)], timings: &[(&str, u64)]) -> Params {
    let timings = timings.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    choices
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain(timings)
        .collect()
}

/// The lock services' paused-holder stories are promised from a named moment: Redisson's and
/// consensus-lock's from when the other client's first write has surely landed (the expiry,
/// then its next try, a round trip and a step), Hazelcast's from when A's session has surely
/// ended (its later steps then land after B's first write). Across wakes from before the
/// lease's end to well past the other's job, every run meets what is promised.
#[test]
fn paused_holders_meet_their_expectation_around_the_takeover() {
    let mut missed = Vec::new();
    let mut redisson = Vec::new();
    for timeout in [9_000, 30_000, 31_000] {
        for start in [1_000, 12_000, 17_000] {
            let renew = timeout / 3;
            let expiry = start / renew * renew + timeout;
            for wake_after in (0..24_000).step_by(500) {
                let pause = expiry + wake_after - start;
                redisson.push(params_of(
                    &[],
                    &[
                        ("watchdog_timeout_ms", timeout),
                        ("pause_start_ms", start),
                        ("pause_ms", pause),
                    ],
                ));
            }
        }
    }
    missed.extend(misses("redisson-watchdog", &redisson));
    let mut hazelcast = Vec::new();
    for storage in ["checks-fence", "ignores-fence"] {
        for ttl in [10_000, 30_000, 31_000] {
            for start in [6_000, 9_000] {
                for wake_after in (0..12_000).step_by(500) {
                    let pause = ttl + wake_after - start;
                    hazelcast.push(params_of(
                        &[("storage", storage)],
                        &[
                            ("session_ttl_ms", ttl),
                            ("pause_start_ms", start),
                            ("pause_ms", pause),
                        ],
                    ));
                }
            }
        }
    }
    missed.extend(misses("hazelcast-fenced-lock", &hazelcast));
    let mut consensus = Vec::new();
    for ttl in [3_000, 10_000] {
        // The pause starts at 1 s; the lease is gone by 0.65 s + the TTL.
        for wake_after in (0..4_000).step_by(100) {
            consensus.push(params_of(
                &[],
                &[("ttl_ms", ttl), ("pause_ms", ttl + wake_after - 350)],
            ));
        }
    }
    missed.extend(misses("consensus-lock", &consensus));
    assert!(missed.is_empty(), "{} runs missed: {missed:#?}", missed.len());
}
