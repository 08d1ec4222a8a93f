//! The simulator's integration tests in one test binary: each file beside this one is a module
//! of it (one compile and one link instead of one per file, which was most of the native test
//! step's time). Run one file's tests with `cargo test -p coordlab-sim --test sim lost_update::`.
//! The goldens, the course file and the fuzz runs keep their own binaries: `COORDLAB_BLESS=1`
//! and scripts/fuzz.sh name them.

mod common;
mod story;

mod advisory_locks;
mod beats;
mod card_summaries;
mod choosing;
mod chubby_sequencer;
mod clock_skew;
mod consensus_lock;
mod deadlock;
mod determinism;
mod duplicate_job;
mod engine_timing;
mod expectations;
mod exported_witness;
mod fence_mistakes;
mod fenced_resource_rules;
mod forking;
mod hazelcast_fenced_lock;
mod hold_message;
mod lazy_snapshots;
mod lease_lifecycle;
mod lease_placement;
mod lease_stampede;
mod lease_store_rules;
mod lease_worker_rules;
mod lock_across_call;
mod lock_alternatives;
mod lock_granularity;
mod lost_update;
mod raft_chaos;
mod raft_figure_8;
mod raft_inputs;
mod raft_quorum;
mod raft_rules;
mod raft_scenarios;
mod raft_sweep;
mod redis_failover;
mod redis_rules;
mod redis_sentinel_rules;
mod redisson_watchdog;
mod redlock;
mod redlock_client_rules;
mod row_lock_modes;
mod scheduled_job_guard;
mod search_parts;
mod search_pruning;
mod search_registry;
mod skip_locked_queue;
mod sweeps;
mod token_sources;
mod trace_file;
mod unfenceable_resource;
mod variant_defaults;
mod wrong_release;
mod zombie_worker;
mod zookeeper_lock;
