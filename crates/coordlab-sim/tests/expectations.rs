//! Every scenario and variant promises something checkable: a declared expectation with at
//! least one outcome field or property verdict. A variant that declares nothing would pass
//! its scenario check whatever the run did.

use coordlab_sim::scenarios::{registry, resolve_params, ParamKind, Params};

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
