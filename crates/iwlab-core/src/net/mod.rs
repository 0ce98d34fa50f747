//! The network: packets, links (loss rules → queue → serialisation → propagation), queue
//! disciplines, topologies and routing.

pub mod dumbbell;
pub mod link;
pub mod loss;
pub mod packet;
pub mod queue;
pub mod topology;
