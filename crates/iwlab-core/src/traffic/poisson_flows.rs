//! Poisson arrivals of flows (SPEC S3; S1.4's flow-size mixes): each arrival picks a
//! client/server pair uniformly at random, draws the response size (whole bytes, one at
//! least) and runs a request/response on a new connection, open loop. The first arrival
//! comes one exponential gap after the start. `count` flows, or until the run ends.
//!
//! Draws per arrival, in this order from the application's stream: pair, size, next gap (the
//! gaps: a Poisson source of [`super::arrivals`]).

use super::arrivals::Source;
use super::common::{draw_bytes, Exchange, Exchanges};
use super::Ends;
use crate::engine::{SimRng, StreamKind};
use crate::metrics::FlowLabel;
use crate::sim::{AppId, Application, ConnId, Core, Side};
use crate::tcp::endpoint::AppEvent;
use crate::traffic::dist::AnyDist;
use rand::Rng;

const LABEL: FlowLabel = FlowLabel { app_kind: "poisson", role: "transfer", page: None };

pub struct PoissonFlows {
    pairs: Vec<Ends>,
    source: Source,
    size: AnyDist,
    request: u64,
    count: Option<u32>,
    rng: Option<SimRng>,
    started: u32,
    live: Exchanges,
}

impl PoissonFlows {
    /// Built (and validated: `pairs` not empty, `source` Poisson) by [`super::build_app`].
    pub(crate) fn new(pairs: Vec<Ends>, source: Source, size: AnyDist, request: u64, count: Option<u32>) -> Self {
        debug_assert!(!pairs.is_empty());
        PoissonFlows { pairs, source, size, request, count, rng: None, started: 0, live: Exchanges::default() }
    }

    /// Flows started so far.
    pub fn started(&self) -> u32 {
        self.started
    }
    /// Flows whose response has not fully arrived yet.
    pub fn in_progress(&self) -> usize {
        self.live.len()
    }

    fn schedule_next(&mut self, core: &mut Core, me: AppId, first: bool) {
        if self.count.is_some_and(|c| self.started >= c) {
            return;
        }
        let (now, rng) = (core.now(), self.rng.as_mut().expect("started"));
        let at = if first { self.source.first(now, rng) } else { self.source.after_arrival(now, rng) };
        if let Some(at) = at {
            core.set_timer(me, at, 0);
        }
    }
}

impl Application for PoissonFlows {
    fn start(&mut self, core: &mut Core, me: AppId) {
        self.rng = Some(core.streams().stream(StreamKind::App, me as u64));
        self.schedule_next(core, me, true);
    }

    fn on_event(&mut self, core: &mut Core, _me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        self.live.on_event(core, conn, side, ev);
    }

    fn on_timer(&mut self, core: &mut Core, me: AppId, _token: u64) {
        let rng = self.rng.as_mut().expect("started");
        let ends = &self.pairs[rng.gen_range(0..self.pairs.len())];
        let size = draw_bytes(&self.size, rng, 1);
        self.started += 1;
        self.live.insert(Exchange::open(core, me, ends, self.request, size, LABEL));
        self.schedule_next(core, me, false);
    }
}
