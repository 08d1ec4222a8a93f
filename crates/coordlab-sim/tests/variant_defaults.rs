//! A variant can bring its own defaults (zombie-worker's `first-write-only` freezes A before
//! its first write): resolving, switching variant and the user's own values all agree.

use coordlab_sim::scenarios::{find, resolve_params, set_param, Params};

fn given(pairs: &[(&str, &str)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_variant_s_defaults_apply_only_where_the_user_set_nothing() {
    let info = find("zombie-worker").unwrap().info();
    let plain = resolve_params(&info, &Params::new()).unwrap();
    assert_eq!(plain["pause_start_ms"], "5000");
    assert_eq!(plain["heartbeat_ms"], "10000");

    let variant = resolve_params(&info, &given(&[("fencing", "first-write-only")])).unwrap();
    assert_eq!(variant["pause_start_ms"], "2000");
    assert_eq!(variant["heartbeat_ms"], "0");
    assert_eq!(
        variant["pause_ms"], "36000",
        "parameters without a variant default keep theirs"
    );

    let mine = resolve_params(
        &info,
        &given(&[("fencing", "first-write-only"), ("pause_start_ms", "5000")]),
    )
    .unwrap();
    assert_eq!(mine["pause_start_ms"], "5000", "a value the user gave wins");
    assert_eq!(mine["heartbeat_ms"], "0");
}

#[test]
fn switching_variant_moves_defaults_and_keeps_the_user_s_values() {
    let info = find("zombie-worker").unwrap().info();
    let plain = resolve_params(&info, &Params::new()).unwrap();

    let switched = set_param(&info, &plain, "fencing", "first-write-only").unwrap();
    assert_eq!(
        switched,
        resolve_params(&info, &given(&[("fencing", "first-write-only")])).unwrap(),
        "picking the variant in the player runs what the CLI runs for --set fencing=first-write-only"
    );

    let tuned = set_param(&info, &plain, "pause_start_ms", "3000").unwrap();
    let switched = set_param(&info, &tuned, "fencing", "first-write-only").unwrap();
    assert_eq!(switched["pause_start_ms"], "3000", "the user's own value stays");
    assert_eq!(switched["heartbeat_ms"], "0");

    let back = set_param(&info, &switched, "fencing", "none").unwrap();
    assert_eq!(back["pause_start_ms"], "3000");
    assert_eq!(
        back["heartbeat_ms"], "10000",
        "leaving the variant restores the plain default"
    );

    assert!(set_param(&info, &plain, "fencing", "nonsense").is_err());
    assert!(set_param(&info, &plain, "pause_start_ms", "-4").is_err());
}
