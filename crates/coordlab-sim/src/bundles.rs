//! Which browser bundles need a part of a protocol. A bundle is built with its chapter's cargo
//! feature alone (`scenarios::BUNDLES`), so code guarded by a part's [`Spoken::here`] leaves
//! every bundle none of whose scenarios uses the part: its handling, its labels and its
//! narration. A guard records the part in tests, and one test runs every scenario at its
//! defaults and with each choice of its parameters and checks that it used only parts its
//! bundles have.

/// The bundles (each a cargo feature of the same name) with a participant that uses a part,
/// and whether this build is one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spoken {
    pub bundles: &'static [&'static str],
    pub here: bool,
}

/// [`Spoken`] for the bundles listed.
macro_rules! spoken_in {
    ($($bundle:literal),+) => {
        $crate::bundles::Spoken {
            bundles: &[$($bundle),+],
            here: false $(|| cfg!(feature = $bundle))+,
        }
    };
}
pub(crate) use spoken_in;

/// Every scenario this build runs, at its defaults and with each choice of each of its
/// parameters, with the bundles it runs in (its chapter's, and the side by side's for the
/// pair it shows).
#[cfg(test)]
pub(crate) fn every_variant() -> Vec<(
    &'static crate::scenarios::ScenarioDef,
    Vec<&'static str>,
    crate::scenarios::Params,
)> {
    use crate::scenarios::{registry, resolve_params, set_param, ParamKind, Params, COMPARE_PAIR};
    let mut out = Vec::new();
    for def in registry().iter().filter(|d| d.setup.is_some()) {
        let mut bundles = vec![def.bundle];
        if [COMPARE_PAIR.0, COMPARE_PAIR.1].contains(&def.id) {
            bundles.push("pair");
        }
        let info = def.info();
        let defaults = resolve_params(&info, &Params::new()).expect("the defaults resolve");
        out.push((def, bundles.clone(), defaults.clone()));
        for spec in &info.params {
            if let ParamKind::Choice { options } = &spec.kind {
                for option in options {
                    let params = set_param(&info, &defaults, spec.key, option.value);
                    out.push((def, bundles.clone(), params.expect("a listed choice is allowed")));
                }
            }
        }
    }
    out
}

/// Runs one scenario variant of [`every_variant`] to its end (seed 1, no actions).
#[cfg(test)]
pub(crate) fn run_variant(def: &crate::scenarios::ScenarioDef, params: &crate::scenarios::Params) {
    use crate::kernel::engine::{Limits, Recording};
    let request = crate::scenarios::RunRequest {
        scenario: def.id.to_string(),
        params: params.clone(),
        seed: 1,
        actions: Vec::new(),
    };
    crate::scenarios::run(&request, Limits::default(), Recording::Lines).expect("the scenario runs");
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    thread_local! {
        /// The guarded parts used on this thread, by name: a guard is asked each time its
        /// part is labelled or handled.
        static USED: RefCell<BTreeMap<String, Spoken>> = const { RefCell::new(BTreeMap::new()) };
    }

    /// Records that `part`, spoken where `spoken` says, was used.
    pub(crate) fn used(part: String, spoken: Spoken) {
        USED.with(|u| u.borrow_mut().insert(part, spoken));
    }

    /// A bundle leaves out the guarded parts none of its scenarios uses: every scenario, at
    /// its defaults and with each choice of each of its parameters, uses only parts its
    /// bundles have. The lists name every bundle with a participant that can use a part, so a
    /// part used only after a fault is covered too.
    #[test]
    fn every_scenario_uses_only_the_guarded_parts_its_bundles_have() {
        let mut wrong = Vec::new();
        let mut seen = Vec::new();
        for (def, bundles, params) in every_variant() {
            USED.with(|u| u.borrow_mut().clear());
            run_variant(def, &params);
            for (part, spoken) in USED.with(|u| u.borrow().clone()) {
                for bundle in &bundles {
                    if !(spoken.here && spoken.bundles.contains(bundle)) {
                        wrong.push(format!(
                            "{} (bundle {bundle}) uses {part} with {params:?}",
                            def.id
                        ));
                    }
                }
                if !seen.contains(&part) {
                    seen.push(part);
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        // Each guarded part is used somewhere: a part nothing used would be checked by nothing.
        seen.sort();
        assert_eq!(seen, ["JobTable", "Marks", "Payments", "RunKeys", "Store", "set"]);
    }
}
