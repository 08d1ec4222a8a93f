//! The lease family's narration, one module per participant kind in `protocols::lease`.

pub mod call_worker;
pub mod fence_worker;
pub mod lease_store;
pub mod lease_worker;
pub mod placed_lease;
