//! The label of a Redis node's timer.

mod node;
