//! The simulation kernel: time, ids, randomness, the event queue, the network, faults, the
//! participant contract and the one engine that runs every scenario. It knows no protocol:
//! everything here is shared by every scenario.

pub mod beats;
pub mod clock;
pub mod collections;
pub mod engine;
pub mod faults;
pub(crate) mod hosted;
pub mod ids;
pub mod message;
pub mod network;
pub mod participant;
pub mod queue;
pub mod rng;
pub mod setup;
pub mod testing;
pub mod time;
pub mod timing;
pub mod view;
pub mod world;
