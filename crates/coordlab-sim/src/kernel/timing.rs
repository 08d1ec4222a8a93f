//! How long things take besides the wire. A message's one-way latency is a property of its
//! link ([`super::network::LinkConfig`]); a run's [`Timing`] adds the two delays that belong
//! to the nodes: the durable write a node makes before it answers, and the lateness of its
//! timers. Both default to zero, and at zero they draw no randomness, so a scenario that
//! does not set them runs exactly as it did before they existed.

/// The node-side delays of a run, the same for every node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// What one durable write costs. A handler that [`persists`](super::participant::Ctx::persist)
    /// writes to disk before anything it sends afterwards leaves: every send that follows the
    /// first persist in the same handler departs this much later (one write per handler, however
    /// many persists it makes). Sends made before the persist, and timers, are not delayed.
    pub durable_write_us: u64,
    /// Every timer fires late by a uniform draw from `0..=timer_jitter_us` (a real timer wakes
    /// a thread that the scheduler runs a little later). Zero: exactly on time, with no draw.
    pub timer_jitter_us: u64,
}
