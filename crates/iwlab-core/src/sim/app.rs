//! Applications drive connections through the simulation core: they open connections, write
//! and close, set timers, and react to their connections' events.

use super::core::{ConnId, Core, Side};
use crate::tcp::endpoint::AppEvent;

/// Index of an application in the simulation.
pub type AppId = u32;

pub trait Application {
    /// Called once, at the application's start time.
    fn start(&mut self, core: &mut Core, me: AppId);
    /// An event on one of the connections this application opened or accepted.
    fn on_event(&mut self, core: &mut Core, me: AppId, conn: ConnId, side: Side, ev: AppEvent);
    /// A timer this application set fired.
    fn on_timer(&mut self, _core: &mut Core, _me: AppId, _token: u64) {}
    /// The run is over (called once, by [`super::Simulation::finish`]): record whatever is
    /// still in progress, e.g. a web page whose last object has not arrived.
    fn finish(&mut self, _core: &mut Core, _me: AppId) {}
}
