//! A simulation: the core (network, connections, events) plus the applications driving it.

pub mod app;
pub mod core;

pub use self::app::{AppId, Application};
use self::core::Event;
pub use self::core::{Accounting, ConnId, ConnSpec, Core, DropReason, Observer, PacketEvent, Side};
use crate::engine::{RngStreams, SimTime};
use crate::net::topology::Topology;

pub struct Simulation {
    pub core: Core,
    apps: Vec<Box<dyn Application + Send>>,
    finished: bool,
}

impl Simulation {
    /// A simulation over `topo` whose random streams derive from `seed`.
    pub fn new(topo: Topology, seed: u64) -> Self {
        Simulation { core: Core::new(topo, RngStreams::new(seed)), apps: Vec::new(), finished: false }
    }

    /// Adds an application that starts at `at`.
    pub fn add_app(&mut self, app: Box<dyn Application + Send>, at: SimTime) -> AppId {
        let id = self.apps.len() as AppId;
        self.apps.push(app);
        self.core.schedule_app_start(id, at);
        id
    }

    pub fn app(&self, id: AppId) -> &(dyn Application + Send) {
        self.apps[id as usize].as_ref()
    }

    /// Processes every event at or before `end`; the clock stops at the last one processed.
    pub fn run_until(&mut self, end: SimTime) {
        while self.core.sched.peek_time().is_some_and(|t| t <= end) {
            let (_, ev) = self.core.sched.pop().unwrap();
            match ev {
                Event::AppStart(app) => self.apps[app as usize].start(&mut self.core, app),
                Event::AppTimer(app, token) => self.apps[app as usize].on_timer(&mut self.core, app, token),
                other => self.core.handle(other),
            }
            while let Some((app, conn, side, e)) = self.core.pending.pop_front() {
                self.apps[app as usize].on_event(&mut self.core, app, conn, side, e);
            }
        }
    }

    /// Ends the run for the applications: calls every application's
    /// [`Application::finish`] once, in id order, so that work still in progress (an open
    /// web page) is recorded. Later calls do nothing. Call it after the last `run_until`.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        for (id, app) in self.apps.iter_mut().enumerate() {
            app.finish(&mut self.core, id as AppId);
        }
    }

    /// Runs until no event is left (or `limit` is reached).
    pub fn run(&mut self, limit: SimTime) {
        self.run_until(limit);
    }

    /// The accounting identity: created = delivered + dropped + in flight, for packets and
    /// for payload bytes.
    pub fn check_accounting(&self) -> Result<(), String> {
        let a = &self.core.acct;
        let inflight = self.core.in_flight();
        if a.created != a.delivered + a.dropped + inflight {
            return Err(format!(
                "packets: created {} != delivered {} + dropped {} + in flight {}",
                a.created, a.delivered, a.dropped, inflight
            ));
        }
        let pin = self.core.payload_in_flight();
        if a.payload_created != a.payload_delivered + a.payload_dropped + pin {
            return Err(format!(
                "payload bytes: created {} != delivered {} + dropped {} + in flight {}",
                a.payload_created, a.payload_delivered, a.payload_dropped, pin
            ));
        }
        let port_drops: u64 = self.core.topo.ports.iter().map(|p| p.counters.queue_drops + p.counters.loss_drops).sum();
        if port_drops != a.dropped {
            return Err(format!("drops counted on ports {port_drops} != dropped packets {}", a.dropped));
        }
        Ok(())
    }
}
