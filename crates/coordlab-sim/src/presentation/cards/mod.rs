//! What each participant's card shows: the view half of a participant, one module per
//! participant kind under its family's folder, mirroring [`crate::protocols`]. Each module
//! holds the [`Card`](crate::kernel::participant::Card) impl of its participant kind and the
//! view-only helpers beside it; [`card`] holds the words every card shares.

pub mod card;
mod database;
pub mod job;
mod lease;
mod raft;
mod redis_locks;
mod services;
mod zookeeper_locks;
