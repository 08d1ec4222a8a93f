//! Nothing but its test: `tests/wasm_fingerprint.rs` runs every golden request on wasm32 and
//! compares each trace's fingerprint with the one the native tests check. It is a crate of its
//! own so that the check compiles the simulator and the test harness for wasm32, not the web
//! app (Yew, web-sys) that an integration test of `coordlab-web` would build with it.
