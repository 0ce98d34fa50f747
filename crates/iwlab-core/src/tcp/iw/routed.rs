//! A sending host's IW by destination route, as `ip route … initcwnd` decides it on a real
//! host (RFC 6928 §4 and §12 advise per-destination IWs and evidence; "Configuring TCP's
//! Initial Window" sets them per route). A scenario's `[[iw.routes]]` (or `iwlab run --policy
//! FILE`) maps destination prefixes onto policies; each destination node has the address the
//! emulator gives it (`scenario::policy_file::sim_host_addresses`), and its longest-prefix
//! route chooses the policy. Destinations no route covers use the application's own policy.
//!
//! One inner instance per policy name holds the state of every route using that name, keyed
//! by the route (its index, the prefix), not by the node: evidence about one host of a prefix
//! applies to the whole prefix, exactly as `iwlab.policy.Decider` keys a real host's state.

use super::policy::{DstKey, IwContext, IwEvent, IwPolicy};
use crate::engine::SimTime;
use std::sync::Arc;

/// The destination → route table shared by every host's `Routed` policy.
#[derive(Debug, Default)]
pub struct RouteTable {
    /// By node id: the index of the route covering that node's address, if any.
    pub route_of: Vec<Option<u32>>,
    /// By route index: the policy name of the route.
    pub policy_of: Vec<String>,
}

/// Generic over the policies it routes to (the crate's `AnyIw`).
pub struct Routed<P> {
    table: Arc<RouteTable>,
    /// By route index: the index in `inner` of that route's policy.
    inner_of: Vec<usize>,
    /// One instance per policy name the routes use.
    inner: Vec<P>,
    /// The application's policy, for destinations no route covers.
    uncovered: Box<P>,
}

impl<P: IwPolicy> Routed<P> {
    /// `build(name)` makes a fresh instance of the named policy.
    pub fn new(table: Arc<RouteTable>, uncovered: P, build: impl Fn(&str) -> P) -> Self {
        let mut names: Vec<&str> = Vec::new();
        let inner_of = table
            .policy_of
            .iter()
            .map(|n| match names.iter().position(|m| m == n) {
                Some(i) => i,
                None => {
                    names.push(n);
                    names.len() - 1
                }
            })
            .collect();
        let inner = names.iter().map(|n| build(n)).collect();
        Routed { table, inner_of, inner, uncovered: Box::new(uncovered) }
    }

    /// The name of the policy of the route covering `dst`; None when no route covers it (the
    /// application's policy decides).
    pub fn route_policy(&self, dst: DstKey) -> Option<&str> {
        let r = self.table.route_of.get(dst as usize).copied().flatten()?;
        self.table.policy_of.get(r as usize).map(String::as_str)
    }

    /// The policy and the key it knows `dst` by.
    fn route(&mut self, dst: DstKey) -> (&mut P, DstKey) {
        match self.table.route_of.get(dst as usize).copied().flatten() {
            Some(r) => (&mut self.inner[self.inner_of[r as usize]], r),
            None => (&mut self.uncovered, dst),
        }
    }
}

impl<P: IwPolicy> IwPolicy for Routed<P> {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        let (p, dst) = self.route(ctx.dst);
        p.initial_window(&IwContext { dst, ..*ctx })
    }
    fn restart_window(&mut self, ctx: &IwContext, iw_loss_bytes: Option<u64>) -> u64 {
        let (p, dst) = self.route(ctx.dst);
        p.restart_window(&IwContext { dst, ..*ctx }, iw_loss_bytes)
    }
    fn learn(&mut self, ev: &IwEvent) {
        let (p, dst) = self.route(ev.dst);
        p.learn(&IwEvent { dst, ..*ev })
    }
    fn name(&self) -> &'static str {
        "routed"
    }
    fn describe(&self, dst: DstKey, now: SimTime) -> serde_json::Value {
        match self.table.route_of.get(dst as usize).copied().flatten() {
            Some(r) => self.inner[self.inner_of[r as usize]].describe(r, now),
            None => self.uncovered.describe(dst, now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;
    use crate::tcp::iw::{IwConfig, IwEventKind};

    #[test]
    fn each_route_keys_its_policys_state_and_uncovered_nodes_use_the_apps_policy() {
        // Nodes 0, 1 on route 0 (fallback), node 2 on route 1 (the same policy), node 3 uncovered.
        let table = Arc::new(RouteTable {
            route_of: vec![Some(0), Some(0), Some(1), None],
            policy_of: vec!["fb".into(), "fb".into()],
        });
        let fb = IwConfig::Rfc6928Fallback { expiry: SimDuration::from_secs(10), max_entries: 16 };
        let mut p = Routed::new(table, IwConfig::Fixed { segments: 2 }.build(), |_| fb.build());
        let ctx = |dst| IwContext { mss: 1460, dst, declared_size: None, now: SimTime::ZERO };
        p.learn(&IwEvent { dst: 0, now: SimTime::ZERO, kind: IwEventKind::LossInInitialWindow { bytes_sent: 9000 } });
        assert_eq!(p.initial_window(&ctx(1)), 4380, "node 1 shares route 0's evidence");
        assert_eq!(p.initial_window(&ctx(2)), 14600, "route 1 is another prefix");
        assert_eq!(p.initial_window(&ctx(3)), 2920, "uncovered: the application's policy");
        assert_eq!(p.describe(0, SimTime::ZERO)["fallback"], true);
        assert_eq!((p.route_policy(0), p.route_policy(2), p.route_policy(3)), (Some("fb"), Some("fb"), None));
    }
}
