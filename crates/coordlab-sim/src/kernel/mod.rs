//! The simulation kernel: time, ids, randomness, the event queue, the network, faults and the
//! engine that applies participants' effects. It knows no protocol: everything here is shared
//! by every scenario.

pub mod clock;
pub mod engine;
pub mod faults;
pub mod ids;
pub mod network;
pub mod participant;
pub mod queue;
pub mod rng;
pub mod time;
