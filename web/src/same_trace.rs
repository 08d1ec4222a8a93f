//! A run's trace as the views share it: compared by identity. A new trace is a new run, so
//! props and memos that hold one never compare thousands of entries on every render (the
//! derived `PartialEq` of `Rc<Trace>` would, since a trace is not `Eq`).

use coordlab_sim::trace::Trace;
use std::ops::Deref;
use std::rc::Rc;

#[derive(Clone, Debug)]
pub struct SameTrace(pub Rc<Trace>);

impl SameTrace {
    pub fn new(trace: Trace) -> SameTrace {
        SameTrace(Rc::new(trace))
    }
}

impl PartialEq for SameTrace {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for SameTrace {
    type Target = Trace;
    fn deref(&self) -> &Trace {
        &self.0
    }
}
