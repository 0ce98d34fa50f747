//! Request/response flows of a fixed size, open loop (the congested-links study's netperf-like short flows, docs/studies.md):
//! each arrival opens a new connection whatever the earlier flows are doing. Periodic
//! arrivals start at the application's start time and then every `period`; a Poisson
//! process's first arrival comes one exponential gap after the start. `count` flows, or
//! until the run ends.

use super::common::{Exchange, Exchanges};
use super::{Arrivals, Ends};
use crate::engine::{SimDuration, SimRng, StreamKind};
use crate::metrics::FlowLabel;
use crate::sim::{AppId, Application, ConnId, Core, Side};
use crate::tcp::endpoint::AppEvent;
use crate::traffic::dist::{Exponential, SizeDist};

const LABEL: FlowLabel = FlowLabel { app_kind: "short", role: "transfer", page: None };

/// When the next arrival comes.
pub(crate) enum Gap {
    Periodic(SimDuration),
    /// Exponential gaps, in seconds.
    Poisson(Exponential),
}

impl Gap {
    pub(crate) fn from_arrivals(a: &Arrivals) -> Result<Self, String> {
        match *a {
            Arrivals::Periodic(p) if p > SimDuration::ZERO => Ok(Gap::Periodic(p)),
            Arrivals::Periodic(p) => Err(format!("arrivals.period = {p} is not allowed; expected > 0")),
            Arrivals::Poisson { rate_per_s } => Ok(Gap::Poisson(poisson(rate_per_s, "arrivals.rate_per_s")?)),
        }
    }

    pub(crate) fn draw(&self, rng: &mut SimRng) -> SimDuration {
        match self {
            Gap::Periodic(p) => *p,
            Gap::Poisson(e) => SimDuration::from_secs_f64(e.sample(rng)),
        }
    }
}

/// Exponential gaps for `rate_per_s` arrivals per second; `field` names it in the error.
pub(crate) fn poisson(rate_per_s: f64, field: &str) -> Result<Exponential, String> {
    if !(rate_per_s.is_finite() && rate_per_s > 0.0) {
        return Err(format!("{field} = {rate_per_s} is not allowed; expected a finite rate > 0"));
    }
    Exponential::new(1.0 / rate_per_s).map_err(|e| format!("{field} = {rate_per_s}: {e}"))
}

pub struct ShortFlows {
    ends: Ends,
    request: u64,
    response: u64,
    gap: Gap,
    count: Option<u32>,
    rng: Option<SimRng>,
    started: u32,
    live: Exchanges,
}

impl ShortFlows {
    /// Built (and validated) by [`super::build_app`].
    pub(crate) fn new(ends: Ends, request: u64, response: u64, gap: Gap, count: Option<u32>) -> Self {
        ShortFlows { ends, request, response, gap, count, rng: None, started: 0, live: Exchanges::default() }
    }

    /// Flows started so far.
    pub fn started(&self) -> u32 {
        self.started
    }
    /// Flows whose response has not fully arrived yet.
    pub fn in_progress(&self) -> usize {
        self.live.len()
    }

    fn schedule_next(&mut self, core: &mut Core, me: AppId) {
        if self.count.is_some_and(|c| self.started >= c) {
            return;
        }
        let rng = self.rng.as_mut().expect("started");
        let at = core.now() + self.gap.draw(rng);
        core.set_timer(me, at, 0);
    }

    fn arrive(&mut self, core: &mut Core, me: AppId) {
        self.started += 1;
        self.live.insert(Exchange::open(core, me, &self.ends, self.request, self.response, LABEL));
        self.schedule_next(core, me);
    }
}

impl Application for ShortFlows {
    fn start(&mut self, core: &mut Core, me: AppId) {
        self.rng = Some(core.streams().stream(StreamKind::App, me as u64));
        match self.gap {
            Gap::Periodic(_) if self.count != Some(0) => self.arrive(core, me),
            Gap::Periodic(_) => {}
            Gap::Poisson(_) => self.schedule_next(core, me),
        }
    }

    fn on_event(&mut self, core: &mut Core, _me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        self.live.on_event(core, conn, side, ev);
    }

    fn on_timer(&mut self, core: &mut Core, me: AppId, _token: u64) {
        self.arrive(core, me);
    }
}
