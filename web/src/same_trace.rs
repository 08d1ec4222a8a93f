//! A run as the views share it: its trace, recorded without snapshots, and the state of each
//! step, computed the first time it is shown. Both compare by identity: a new trace is a new
//! run, so props and memos that hold one never compare thousands of entries on every render
//! (the derived `PartialEq` of `Rc<Trace>` would, since a trace is not `Eq`).
//!
//! Snapshotting every step of a 2,000-event run costs more than simulating it several times
//! over; a viewer shows one step at a time, so it pays only for the steps it shows.

use coordlab_sim::scenarios::{self, LazySnapshots};
use coordlab_sim::trace::{Snapshot, Trace};
use coordlab_sim::{Limits, Recording, RunRequest};
use std::cell::RefCell;
use std::ops::Deref;
use std::rc::Rc;

/// Simulates a request for the views: the trace without snapshots, and its states on demand.
pub fn simulate(request: &RunRequest) -> Result<(SameTrace, States), String> {
    let trace = scenarios::run(request, Limits::default(), Recording::Lines).map_err(|e| e.to_string())?;
    let states = LazySnapshots::new(request, Limits::default()).map_err(|e| e.to_string())?;
    Ok((SameTrace::new(trace), States(Rc::new(RefCell::new(states)))))
}

/// The state after each step of one run, computed as far as it has been asked for.
#[derive(Clone)]
pub struct States(Rc<RefCell<LazySnapshots>>);

impl States {
    /// The state after step `i` (empty past the end of the run, which no view asks for).
    pub fn at(&self, i: usize) -> SameState {
        Same(self.0.borrow_mut().at(i).unwrap_or_default())
    }
}

impl PartialEq for States {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for States {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("States")
    }
}

/// A value shared by the views and compared by identity: [`SameTrace`], [`SameState`].
#[derive(Debug, Default)]
pub struct Same<T>(pub Rc<T>);

impl<T> Same<T> {
    pub fn new(value: T) -> Same<T> {
        Same(Rc::new(value))
    }
}

// Not derived: a derived `Clone` would ask `T: Clone` of a value it never copies.
impl<T> Clone for Same<T> {
    fn clone(&self) -> Self {
        Same(Rc::clone(&self.0))
    }
}

impl<T> PartialEq for Same<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> Deref for Same<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A run's trace: a new trace is a new run.
pub type SameTrace = Same<Trace>;

/// The state after one step: a step's state is made once and kept ([`States::at`]), so the
/// same step of the same run is the same pointer. Equal states at different pointers (two
/// steps that change nothing, or the same step of a run simulated again) draw once more;
/// comparing every card's text at each render cost every player bundle about 1.1 KB.
pub type SameState = Same<Snapshot>;
