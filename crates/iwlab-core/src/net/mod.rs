//! The network: packets, links (serialisation → propagation), queue disciplines, loss rules,
//! topologies and routing.

pub mod packet;
pub mod queue;
