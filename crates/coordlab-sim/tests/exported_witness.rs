//! A regression test exported by the search, used as a user would use it: `exported/
//! zombie_worker.rs` is exactly what `coordlab search zombie-worker --set fencing=none
//! --faults 1 --property no-double-debit --export-test` prints (the command line's
//! `tests/cli_search.rs` checks that), compiled here against the public API; its test passes
//! while the schedule breaks the property, and its assertion fails on the fixed variant.

#[path = "exported/zombie_worker.rs"]
mod exported;

#[test]
#[should_panic(expected = "no-double-debit no longer breaks under zombie-worker fencing=fence-on-takeover")]
fn the_exported_assertion_fails_once_the_design_is_fixed() {
    exported::assert_breaks(
        "zombie-worker fencing=fence-on-takeover,pause_ms=0 1 5@pause:1:22510",
        "no-double-debit",
    );
}
