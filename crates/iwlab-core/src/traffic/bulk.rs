//! Infinite bulk transfer (iperf-like, the congested-links study's long-lived flows, docs/studies.md): one connection whose
//! data sender writes [`BULK_BYTES`] at once — more than any run can move — and never
//! closes. Writing it all up front keeps the sender from ever waiting on the application.

use super::common::open;
use super::Ends;
use crate::metrics::FlowLabel;
use crate::sim::{AppId, Application, ConnId, Core, Side};
use crate::tcp::endpoint::AppEvent;

/// What the data sender writes: 2^62 bytes, 36 years at 1 Tb/s, and far enough from
/// `u64::MAX` that sequence arithmetic (`1 + written`, `snd_una + window`) cannot overflow.
pub const BULK_BYTES: u64 = u64::MAX / 4;

pub struct Bulk {
    ends: Ends,
    upload: bool,
    conn: Option<ConnId>,
}

impl Bulk {
    /// Built (and validated) by [`super::build_app`].
    pub(crate) fn new(ends: Ends, upload: bool) -> Self {
        Bulk { ends, upload, conn: None }
    }

    /// The connection, once started.
    pub fn conn(&self) -> Option<ConnId> {
        self.conn
    }
}

impl Application for Bulk {
    fn start(&mut self, core: &mut Core, me: AppId) {
        let role = if self.upload { "upload" } else { "download" };
        let label = FlowLabel { app_kind: "bulk", role, page: None };
        // No size declared: like iperf, the sender does not know how much it will send
        // (a size-based IW policy gives an undeclared flow its smallest window).
        let conn = open(core, me, &self.ends, None, None, label);
        self.conn = Some(conn);
        if self.upload {
            core.write(conn, Side::Client, BULK_BYTES);
        }
    }

    fn on_event(&mut self, core: &mut Core, _me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        if !self.upload && side == Side::Server && ev == AppEvent::Established && self.conn == Some(conn) {
            core.write(conn, Side::Server, BULK_BYTES);
        }
    }
}
