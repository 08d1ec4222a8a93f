//! The event queue: ordered by (time, sequence number). The sequence number only grows and
//! breaks ties, so two events at the same instant always run in the order they were scheduled.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Scheduled<E> {
    time_us: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time_us == other.time_us && self.seq == other.seq
    }
}
impl<E> Eq for Scheduled<E> {}
impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Scheduled<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time_us, other.seq).cmp(&(self.time_us, self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Scheduled<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn push(&mut self, time_us: u64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Scheduled { time_us, seq, event });
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|s| (s.time_us, s.event))
    }

    pub fn peek_time_us(&self) -> Option<u64> {
        self.heap.peek().map(|s| s.time_us)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::default();
        q.push(20, "late");
        q.push(10, "first-at-10");
        q.push(10, "second-at-10");
        assert_eq!(q.pop(), Some((10, "first-at-10")));
        assert_eq!(q.pop(), Some((10, "second-at-10")));
        assert_eq!(q.pop(), Some((20, "late")));
        assert_eq!(q.pop(), None);
    }
}
