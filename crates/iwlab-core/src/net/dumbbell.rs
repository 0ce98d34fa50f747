//! The dumbbell: left hosts — router L — bottleneck — router R — right hosts, each host on
//! its own access link (rate, delay and queue per host and direction), so that populations
//! can be heterogeneous.

use super::link::LinkSpec;
use super::packet::{LinkId, NodeId};
use super::topology::{NodeKind, Topology};
use crate::engine::RngStreams;

/// One host's access link: `up` carries host → router, `down` router → host.
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    pub up: LinkSpec,
    pub down: LinkSpec,
}

impl Access {
    pub fn symmetric(spec: LinkSpec) -> Self {
        Access { up: spec.clone(), down: spec }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct DumbbellSpec {
    pub left: Vec<Access>,
    pub right: Vec<Access>,
    /// Router L → router R.
    pub forward: LinkSpec,
    /// Router R → router L.
    pub reverse: LinkSpec,
}

/// Node and port ids of a built dumbbell.
#[derive(Clone, Debug)]
pub struct Dumbbell {
    pub router_left: NodeId,
    pub router_right: NodeId,
    pub left: Vec<NodeId>,
    pub right: Vec<NodeId>,
    /// Bottleneck ports L→R and R→L.
    pub forward: LinkId,
    pub reverse: LinkId,
}

impl DumbbellSpec {
    pub fn build(&self, topo: &mut Topology, streams: &RngStreams) -> Dumbbell {
        let rl = topo.add_node("router-left", NodeKind::Router);
        let rr = topo.add_node("router-right", NodeKind::Router);
        let (forward, reverse) = topo.connect(rl, rr, &self.forward, &self.reverse, streams);
        let mut side = |hosts: &[Access], router: NodeId, prefix: &str| -> Vec<NodeId> {
            hosts
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let h = topo.add_node(format!("{prefix}{i}"), NodeKind::Host);
                    topo.connect(h, router, &a.up, &a.down, streams);
                    h
                })
                .collect()
        };
        let left = side(&self.left, rl, "left-");
        let right = side(&self.right, rr, "right-");
        topo.compute_routes();
        Dumbbell { router_left: rl, router_right: rr, left, right, forward, reverse }
    }
}
