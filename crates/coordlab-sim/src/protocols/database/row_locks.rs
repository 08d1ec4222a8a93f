//! A row lock manager as PostgreSQL keeps one: four row-level lock modes with the conflict
//! table of the PostgreSQL manual ("Explicit Locking", Row-Level Locks), a wait queue per row,
//! the `NOWAIT` and `SKIP LOCKED` wait policies, and the wait-for graph that deadlock
//! detection searches for a cycle.
//!
//! It is bookkeeping only: it decides who is granted, who waits and who is refused, and the
//! database participant that owns it turns those answers into replies, timers and narration.
//! A transaction is identified by its connection (one open transaction per client node).
//!
//! Like PostgreSQL, a request is granted when it conflicts with no *holder*; a compatible
//! request does not queue behind an incompatible waiter.

use crate::kernel::collections::{VecMap, VecSet};
use crate::kernel::ids::NodeId;
use std::fmt;

/// The four row-level lock modes, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockMode {
    /// Taken by a foreign-key check (inserting a child row): the key must not change.
    KeyShare,
    /// `FOR SHARE`: the row must not change.
    Share,
    /// `FOR NO KEY UPDATE`, and what an `UPDATE` that leaves the key alone takes.
    NoKeyUpdate,
    /// `FOR UPDATE`, and what a `DELETE` or a key-changing `UPDATE` takes.
    Update,
}

impl LockMode {
    pub const ALL: [LockMode; 4] = [
        LockMode::KeyShare,
        LockMode::Share,
        LockMode::NoKeyUpdate,
        LockMode::Update,
    ];

    /// Whether a lock in `self` held by one transaction blocks `other` for another.
    /// The table is symmetric.
    pub fn conflicts_with(self, other: LockMode) -> bool {
        CONFLICTS[self as usize][other as usize]
    }

    /// The SQL clause: `FOR KEY SHARE` …
    pub fn sql(self) -> &'static str {
        match self {
            LockMode::KeyShare => "FOR KEY SHARE",
            LockMode::Share => "FOR SHARE",
            LockMode::NoKeyUpdate => "FOR NO KEY UPDATE",
            LockMode::Update => "FOR UPDATE",
        }
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.sql())
    }
}

/// PostgreSQL's row-lock conflict table, indexed by [`LockMode`] in the order of
/// [`LockMode::ALL`]: `CONFLICTS[held][requested]` is true when the request must wait. The
/// simulator decides with it and the conformance suite checks it against a real server.
pub const CONFLICTS: [[bool; 4]; 4] = [
    // requested: KEY SHARE, SHARE, NO KEY UPDATE, UPDATE
    [false, false, false, true], // held FOR KEY SHARE
    [false, false, true, true],  // held FOR SHARE
    [false, true, true, true],   // held FOR NO KEY UPDATE
    [true, true, true, true],    // held FOR UPDATE
];

/// What a transaction does when the row is locked in a conflicting mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Queue until the holders end their transactions.
    Block,
    /// Fail at once (PostgreSQL: SQLSTATE 55P03, "could not obtain lock on row").
    NoWait,
    /// Leave the row out of the result.
    SkipLocked,
}

/// A row: its table and primary key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RowKey {
    pub table: &'static str,
    pub id: u32,
}

/// The id of InnoDB's "supremum", the pseudo-row past a table's last row: a lock on it locks
/// the gap after the last row (`lock-granularity` only).
pub const SUPREMUM: u32 = u32::MAX;

impl fmt::Display for RowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.id == SUPREMUM {
            write!(f, "{}#supremum", self.table)
        } else {
            write!(f, "{}#{}", self.table, self.id)
        }
    }
}

/// The answer to one lock request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquire {
    Granted,
    /// Queued (policy `Block`); it is granted later by [`RowLockManager::release_all`].
    Waiting,
    /// Refused at once (policy `NoWait`).
    Refused,
    /// Not taken (policy `SkipLocked`).
    Skipped,
}

/// Who holds and who waits for one row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowLocks {
    /// Holders and their strongest mode, in the order they were granted.
    pub holders: Vec<(NodeId, LockMode)>,
    /// Waiters, oldest first.
    pub queue: Vec<(NodeId, LockMode)>,
}

/// An edge of the wait-for graph: `waiter` waits for `holder` to end, for `row`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitEdge {
    pub waiter: NodeId,
    pub holder: NodeId,
    pub row: RowKey,
    pub mode: LockMode,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowLockManager {
    pub rows: VecMap<RowKey, RowLocks>,
}

impl RowLockManager {
    /// The mode `txn` holds on `row`, if any.
    pub fn held(&self, txn: NodeId, row: RowKey) -> Option<LockMode> {
        self.rows
            .get(&row)
            .and_then(|r| r.holders.iter().find(|(t, _)| *t == txn).map(|(_, m)| *m))
    }

    /// Holders of `row` other than `txn` whose mode conflicts with `mode`.
    pub fn blockers(&self, txn: NodeId, row: RowKey, mode: LockMode) -> Vec<NodeId> {
        self.rows.get(&row).map_or_else(Vec::new, |r| {
            r.holders
                .iter()
                .filter(|(t, m)| *t != txn && m.conflicts_with(mode))
                .map(|(t, _)| *t)
                .collect()
        })
    }

    /// Asks for `mode` on `row` for `txn`. A transaction that already holds the mode or a
    /// stronger one is granted at once; a weaker holding is upgraded.
    pub fn acquire(&mut self, txn: NodeId, row: RowKey, mode: LockMode, policy: WaitPolicy) -> Acquire {
        if self.held(txn, row).is_some_and(|m| m >= mode) {
            return Acquire::Granted;
        }
        if self.blockers(txn, row, mode).is_empty() {
            self.grant(txn, row, mode);
            return Acquire::Granted;
        }
        match policy {
            WaitPolicy::NoWait => Acquire::Refused,
            WaitPolicy::SkipLocked => Acquire::Skipped,
            WaitPolicy::Block => {
                // A transaction waits for one row at a time: a new wait replaces an old one.
                self.cancel_wait(txn);
                self.rows
                    .get_or_insert_with(row, RowLocks::default)
                    .queue
                    .push((txn, mode));
                Acquire::Waiting
            }
        }
    }

    fn grant(&mut self, txn: NodeId, row: RowKey, mode: LockMode) {
        let locks = self.rows.get_or_insert_with(row, RowLocks::default);
        match locks.holders.iter_mut().find(|(t, _)| *t == txn) {
            Some(held) => held.1 = held.1.max(mode),
            None => locks.holders.push((txn, mode)),
        }
    }

    /// Takes `txn` out of any queue it waits in (its statement was abandoned).
    pub fn cancel_wait(&mut self, txn: NodeId) {
        for r in self.rows.values_mut() {
            r.queue.retain(|(t, _)| *t != txn);
        }
        self.rows
            .retain(|_, r| !r.holders.is_empty() || !r.queue.is_empty());
    }

    /// The row and mode `txn` is queued for, if it waits.
    pub fn waiting(&self, txn: NodeId) -> Option<(RowKey, LockMode)> {
        self.rows
            .iter()
            .find_map(|(row, r)| r.queue.iter().find(|(t, _)| *t == txn).map(|(_, m)| (*row, *m)))
    }

    /// Every row `txn` holds a lock on, with the mode.
    pub fn holdings(&self, txn: NodeId) -> Vec<(RowKey, LockMode)> {
        self.rows
            .iter()
            .filter_map(|(row, r)| r.holders.iter().find(|(t, _)| *t == txn).map(|(_, m)| (*row, *m)))
            .collect()
    }

    /// Ends `txn` (commit, rollback or abort): drops its locks and its place in any queue,
    /// then grants every waiter that no longer conflicts, oldest first. Returns the grants.
    pub fn release_all(&mut self, txn: NodeId) -> Vec<(NodeId, RowKey, LockMode)> {
        let mut touched = VecSet::new();
        for (row, r) in self.rows.iter_mut() {
            let before = r.holders.len() + r.queue.len();
            r.holders.retain(|(t, _)| *t != txn);
            r.queue.retain(|(t, _)| *t != txn);
            if r.holders.len() + r.queue.len() != before {
                touched.insert(*row);
            }
        }
        let mut granted = Vec::new();
        for row in touched {
            let queue = std::mem::take(&mut self.rows.get_mut(&row).expect("touched").queue);
            let mut still = Vec::new();
            for (waiter, mode) in queue {
                if self.blockers(waiter, row, mode).is_empty() {
                    self.grant(waiter, row, mode);
                    granted.push((waiter, row, mode));
                } else {
                    still.push((waiter, mode));
                }
            }
            self.rows.get_mut(&row).expect("touched").queue = still;
        }
        self.rows
            .retain(|_, r| !r.holders.is_empty() || !r.queue.is_empty());
        granted
    }

    /// The wait-for graph: one edge per waiter and conflicting holder.
    pub fn wait_edges(&self) -> Vec<WaitEdge> {
        let mut edges = Vec::new();
        for (row, r) in &self.rows {
            for (waiter, mode) in &r.queue {
                for holder in self.blockers(*waiter, *row, *mode) {
                    edges.push(WaitEdge {
                        waiter: *waiter,
                        holder,
                        row: *row,
                        mode: *mode,
                    });
                }
            }
        }
        edges
    }

    /// A cycle of the wait-for graph through `txn`, as the transactions along it starting at
    /// `txn` (`txn` waits for the second, …, the last waits for `txn`); `None` if there is none.
    pub fn cycle_through(&self, txn: NodeId) -> Option<Vec<NodeId>> {
        let edges = self.wait_edges();
        let mut path = vec![txn];
        let mut seen = VecSet::new();
        fn walk(
            edges: &[WaitEdge],
            start: NodeId,
            path: &mut Vec<NodeId>,
            seen: &mut VecSet<NodeId>,
        ) -> bool {
            let at = *path.last().expect("path starts with the start");
            for e in edges.iter().filter(|e| e.waiter == at) {
                if e.holder == start {
                    return true;
                }
                if seen.insert(e.holder) {
                    path.push(e.holder);
                    if walk(edges, start, path, seen) {
                        return true;
                    }
                    path.pop();
                }
            }
            false
        }
        walk(&edges, txn, &mut path, &mut seen).then_some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LockMode::*;

    const T1: NodeId = NodeId(1);
    const T2: NodeId = NodeId(2);
    const T3: NodeId = NodeId(3);
    const A: RowKey = RowKey {
        table: "accounts",
        id: 1,
    };
    const B: RowKey = RowKey {
        table: "accounts",
        id: 2,
    };

    /// The conflict table of the PostgreSQL manual, row by row (X = conflicts):
    /// requested \ held: KEY SHARE, SHARE, NO KEY UPDATE, UPDATE.
    #[test]
    fn the_conflict_table_is_the_one_in_the_postgresql_manual() {
        let table = [
            (KeyShare, [false, false, false, true]),
            (Share, [false, false, true, true]),
            (NoKeyUpdate, [false, true, true, true]),
            (Update, [true, true, true, true]),
        ];
        for (requested, row) in table {
            for (held, want) in LockMode::ALL.into_iter().zip(row) {
                assert_eq!(requested.conflicts_with(held), want, "{requested} vs {held}");
                assert_eq!(held.conflicts_with(requested), want, "symmetric");
            }
        }
    }

    #[test]
    fn the_exported_table_follows_the_order_of_all_and_is_symmetric() {
        for (i, held) in LockMode::ALL.into_iter().enumerate() {
            assert_eq!(held as usize, i);
            for (j, requested) in LockMode::ALL.into_iter().enumerate() {
                assert_eq!(CONFLICTS[i][j], CONFLICTS[j][i]);
                assert_eq!(held.conflicts_with(requested), CONFLICTS[i][j]);
            }
        }
        // The foreign-key check passes a no-key update and stops at a delete.
        assert!(!KeyShare.conflicts_with(NoKeyUpdate));
        assert!(KeyShare.conflicts_with(Update));
    }

    #[test]
    fn a_conflicting_request_waits_and_is_granted_when_the_holder_ends() {
        let mut m = RowLockManager::default();
        assert_eq!(m.acquire(T1, A, Update, WaitPolicy::Block), Acquire::Granted);
        assert_eq!(m.acquire(T2, A, Share, WaitPolicy::Block), Acquire::Waiting);
        assert_eq!(m.waiting(T2), Some((A, Share)));
        assert_eq!(
            m.wait_edges(),
            vec![WaitEdge {
                waiter: T2,
                holder: T1,
                row: A,
                mode: Share
            }]
        );
        assert_eq!(m.release_all(T1), vec![(T2, A, Share)]);
        assert_eq!(m.held(T2, A), Some(Share));
        assert!(m.wait_edges().is_empty());
    }

    #[test]
    fn compatible_modes_share_the_row() {
        let mut m = RowLockManager::default();
        assert_eq!(m.acquire(T1, A, NoKeyUpdate, WaitPolicy::Block), Acquire::Granted);
        assert_eq!(
            m.acquire(T2, A, KeyShare, WaitPolicy::Block),
            Acquire::Granted,
            "a foreign-key check passes a no-key update"
        );
        assert_eq!(m.acquire(T3, A, Share, WaitPolicy::Block), Acquire::Waiting);
        // Releasing T2 does not help T3: T1 still conflicts.
        assert!(m.release_all(T2).is_empty());
        assert_eq!(m.release_all(T1), vec![(T3, A, Share)]);
    }

    #[test]
    fn nowait_refuses_and_skip_locked_skips_without_queueing() {
        let mut m = RowLockManager::default();
        m.acquire(T1, A, Update, WaitPolicy::Block);
        assert_eq!(m.acquire(T2, A, Update, WaitPolicy::NoWait), Acquire::Refused);
        assert_eq!(m.acquire(T2, A, Update, WaitPolicy::SkipLocked), Acquire::Skipped);
        assert_eq!(m.waiting(T2), None);
        assert_eq!(m.acquire(T2, B, Update, WaitPolicy::SkipLocked), Acquire::Granted);
    }

    #[test]
    fn a_holder_asking_again_is_granted_and_a_weaker_lock_is_upgraded() {
        let mut m = RowLockManager::default();
        assert_eq!(m.acquire(T1, A, Share, WaitPolicy::Block), Acquire::Granted);
        assert_eq!(m.acquire(T1, A, KeyShare, WaitPolicy::Block), Acquire::Granted);
        assert_eq!(m.held(T1, A), Some(Share));
        assert_eq!(m.acquire(T1, A, Update, WaitPolicy::Block), Acquire::Granted);
        assert_eq!(m.held(T1, A), Some(Update));
        assert_eq!(m.holdings(T1), vec![(A, Update)]);
    }

    #[test]
    fn opposite_orders_make_a_cycle_and_ending_one_transaction_breaks_it() {
        let mut m = RowLockManager::default();
        m.acquire(T1, A, NoKeyUpdate, WaitPolicy::Block);
        m.acquire(T2, B, NoKeyUpdate, WaitPolicy::Block);
        assert_eq!(m.acquire(T1, B, NoKeyUpdate, WaitPolicy::Block), Acquire::Waiting);
        assert_eq!(m.cycle_through(T1), None, "T2 is not waiting yet");
        assert_eq!(m.acquire(T2, A, NoKeyUpdate, WaitPolicy::Block), Acquire::Waiting);
        assert_eq!(m.cycle_through(T1), Some(vec![T1, T2]));
        assert_eq!(m.cycle_through(T2), Some(vec![T2, T1]));
        assert_eq!(m.cycle_through(T3), None);
        // Abort T2: T1 gets B.
        assert_eq!(m.release_all(T2), vec![(T1, B, NoKeyUpdate)]);
        assert_eq!(m.cycle_through(T1), None);
        assert_eq!(m.holdings(T1), vec![(A, NoKeyUpdate), (B, NoKeyUpdate)]);
    }

    #[test]
    fn a_longer_cycle_is_found_and_a_chain_is_not_a_cycle() {
        let c = RowKey {
            table: "accounts",
            id: 3,
        };
        let mut m = RowLockManager::default();
        m.acquire(T1, A, Update, WaitPolicy::Block);
        m.acquire(T2, B, Update, WaitPolicy::Block);
        m.acquire(T3, c, Update, WaitPolicy::Block);
        m.acquire(T1, B, Update, WaitPolicy::Block);
        m.acquire(T2, c, Update, WaitPolicy::Block);
        assert_eq!(m.cycle_through(T1), None, "T1 → T2 → T3, and T3 runs");
        m.acquire(T3, A, Update, WaitPolicy::Block);
        assert_eq!(m.cycle_through(T2), Some(vec![T2, T3, T1]));
    }
}
