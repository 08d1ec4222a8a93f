//! The card of a Redis node.

mod node;
