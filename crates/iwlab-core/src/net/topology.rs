//! Nodes, full-duplex links and static shortest-path routing.

use super::link::{LinkSpec, Port};
use super::packet::{LinkId, NodeId};
use crate::engine::{RngStreams, StreamKind};
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Output ports of this node.
    pub ports: Vec<LinkId>,
}

/// The network graph with its ports and routing table.
pub struct Topology {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    /// `next_port[node * nodes + dst]`: the port `node` forwards to reach `dst` (u32::MAX:
    /// none). One flat table: a route is one load, not two (every hop of every packet asks).
    next_port: Vec<LinkId>,
    /// Nodes when the routes were computed: the table's row length.
    routed_nodes: usize,
}

impl Topology {
    pub fn new() -> Self {
        Topology { nodes: Vec::new(), ports: Vec::new(), next_port: Vec::new(), routed_nodes: 0 }
    }

    pub fn add_node(&mut self, name: impl Into<String>, kind: NodeKind) -> NodeId {
        self.nodes.push(Node { name: name.into(), kind, ports: Vec::new() });
        (self.nodes.len() - 1) as NodeId
    }

    /// Adds a full-duplex link; returns the ports (a→b, b→a). Each direction gets its own
    /// random stream derived from `streams`.
    pub fn connect(
        &mut self,
        a: NodeId,
        b: NodeId,
        ab: &LinkSpec,
        ba: &LinkSpec,
        streams: &RngStreams,
    ) -> (LinkId, LinkId) {
        let id_ab = self.ports.len() as LinkId;
        self.ports.push(Port::new(a, b, ab, streams.stream(StreamKind::Link, id_ab as u64)));
        let id_ba = self.ports.len() as LinkId;
        self.ports.push(Port::new(b, a, ba, streams.stream(StreamKind::Link, id_ba as u64)));
        self.nodes[a as usize].ports.push(id_ab);
        self.nodes[b as usize].ports.push(id_ba);
        (id_ab, id_ba)
    }

    /// Computes minimum-hop routes to every node (BFS from each destination over reversed
    /// links; ties go to the port added first, so routing is deterministic).
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut incoming: Vec<Vec<LinkId>> = vec![Vec::new(); n];
        for (id, p) in self.ports.iter().enumerate() {
            incoming[p.to as usize].push(id as LinkId);
        }
        self.next_port = vec![LinkId::MAX; n * n];
        self.routed_nodes = n;
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for dst in 0..n {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            queue.push_back(dst);
            while let Some(v) = queue.pop_front() {
                for &pid in &incoming[v] {
                    let u = self.ports[pid as usize].from as usize;
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        self.next_port[u * n + dst] = pid;
                        queue.push_back(u);
                    }
                }
            }
        }
    }

    /// The port `at` uses towards `dst`.
    pub fn route(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let n = self.routed_nodes;
        let p = self.next_port[at as usize * n..][..n][dst as usize];
        (p != LinkId::MAX).then_some(p)
    }

    /// The port from `a` to its neighbour `b`.
    pub fn port_between(&self, a: NodeId, b: NodeId) -> Option<LinkId> {
        self.nodes[a as usize].ports.iter().copied().find(|&p| self.ports[p as usize].to == b)
    }
}

impl Default for Topology {
    fn default() -> Self {
        Self::new()
    }
}
