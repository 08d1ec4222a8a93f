//! Chapter 5, consensus: one authority kept on several machines with Raft. Elections, split
//! votes, log replication, quorums under a partition, a stale leader, Figure 8's overwritten
//! entry and random storms of faults, each checked against Raft's safety properties.
//! `raft_beats` holds the stories' beats; the shared Raft builders are `raft_common` and
//! `raft_world` in the parent folder, because chapter 6's consensus lock uses them too.

/// The chapter of the course this folder's scenarios belong to (the registry gives it to each;
/// the course walks chapters in order).
pub const CHAPTER: u8 = 5;

pub mod raft_beats;
pub mod raft_chaos;
pub mod raft_election;
pub mod raft_figure_8;
pub mod raft_log_replication;
pub mod raft_partition;
pub mod raft_quorum;
pub mod raft_split_vote;
pub mod raft_stale_leader;
