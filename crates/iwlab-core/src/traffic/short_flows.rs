//! Request/response flows (SPEC S1.2 netperf-like short flows), each on a new connection,
//! started by one of the arrival models of [`super::arrivals`]: open loop (periodic, Poisson,
//! bursts: each arrival opens a connection whatever the earlier flows are doing), closed loop
//! (one flow at a time, a think time after each) or replayed. Each flow's response size and
//! server IW come from the app's one combination or from its mix. `count` flows, or until the
//! run ends.

use super::arrivals::{Picker, Source, MIX_STREAM};
use super::common::{Exchange, Exchanges};
use super::Ends;
use crate::engine::{SimRng, SimTime, StreamKind};
use crate::metrics::FlowLabel;
use crate::sim::{AppId, Application, ConnId, Core, Side};
use crate::tcp::endpoint::AppEvent;

const LABEL: FlowLabel = FlowLabel { app_kind: "short", role: "transfer", page: None };

/// What one flow is: its ends (the server's IW policy among them) and its sizes.
#[derive(Clone, Debug)]
pub(crate) struct Combo {
    pub ends: Ends,
    pub request: u64,
    pub response: u64,
}

pub struct ShortFlows {
    /// The combinations (for a replay: one per row, in start order).
    combos: Vec<Combo>,
    picker: Picker,
    source: Source,
    count: Option<u32>,
    rng: Option<SimRng>,
    started: u32,
    live: Exchanges,
}

impl ShortFlows {
    /// Built (and validated: `combos` not empty) by [`super::build_app`].
    pub(crate) fn new(combos: Vec<Combo>, picker: Picker, source: Source, count: Option<u32>) -> Self {
        debug_assert!(!combos.is_empty());
        ShortFlows { combos, picker, source, count, rng: None, started: 0, live: Exchanges::default() }
    }

    /// Flows started so far.
    pub fn started(&self) -> u32 {
        self.started
    }
    /// Flows whose response has not fully arrived yet.
    pub fn in_progress(&self) -> usize {
        self.live.len()
    }

    fn exhausted(&self) -> bool {
        self.count.is_some_and(|c| self.started >= c)
    }

    fn wake_at(&mut self, core: &mut Core, me: AppId, at: Option<SimTime>) {
        if let Some(at) = at {
            core.set_timer(me, at, 0);
        }
    }

    fn arrive(&mut self, core: &mut Core, me: AppId) {
        let now = core.now();
        for _ in 0..self.source.due(now) {
            if self.exhausted() {
                return;
            }
            // A replay takes its rows in order; a mix, the picker's next combination.
            let k = if self.source.is_replay() { self.started as usize } else { self.picker.next() };
            let c = &self.combos[k];
            self.started += 1;
            self.live.insert(Exchange::open(core, me, &c.ends, c.request, c.response, LABEL));
        }
        if self.exhausted() {
            return;
        }
        let next = self.source.after_arrival(now, self.rng.as_mut().expect("started"));
        self.wake_at(core, me, next);
    }
}

impl Application for ShortFlows {
    fn start(&mut self, core: &mut Core, me: AppId) {
        self.rng = Some(core.streams().stream(StreamKind::App, me as u64));
        self.picker.seed(core.streams().stream(StreamKind::App, MIX_STREAM | me as u64));
        if self.exhausted() {
            return;
        }
        let now = core.now();
        match self.source.first(now, self.rng.as_mut().expect("started")) {
            Some(at) if at == now => self.arrive(core, me),
            at => self.wake_at(core, me, at),
        }
    }

    fn on_event(&mut self, core: &mut Core, me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        if self.live.on_event(core, conn, side, ev).is_some() && !self.exhausted() {
            let next = self.source.after_end(core.now(), self.rng.as_mut().expect("started"));
            self.wake_at(core, me, next);
        }
    }

    fn on_timer(&mut self, core: &mut Core, me: AppId, _token: u64) {
        self.arrive(core, me);
    }
}
