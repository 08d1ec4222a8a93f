//! Participant kinds, one file (or folder) each, grouped by family: `database`, `lease`,
//! `redis_locks`, `raft`, `zookeeper_locks` and `services`, each folder opening with what its
//! family models. Beside them, what the families share: the job runner every lock client that
//! does a job under its lock runs on (`job`). Every participant is a pure state machine driven
//! by the kernel (see [`crate::kernel::participant::Participant`]); what its card shows and how
//! its messages read live in [`crate::presentation`].

pub mod database;
pub mod job;
pub mod lease;
pub mod raft;
pub mod redis_locks;
pub mod services;
pub mod zookeeper_locks;
