//! Repeated bulk transfers (the RFC 2415 study's FTP clients, docs/studies.md): each transfer is a request/response on
//! a new connection; the next one opens the instant the previous response is complete, or
//! after a gap drawn in seconds. `count` transfers, or until the run ends.

use super::common::{draw_secs, Exchange, Progress};
use super::Ends;
use crate::engine::{SimRng, StreamKind};
use crate::metrics::FlowLabel;
use crate::sim::{AppId, Application, ConnId, Core, Side};
use crate::tcp::endpoint::AppEvent;
use crate::traffic::dist::AnyDist;

const LABEL: FlowLabel = FlowLabel { app_kind: "ftp", role: "transfer", page: None };

pub struct Ftp {
    ends: Ends,
    size: u64,
    request: u64,
    gap: Option<AnyDist>,
    count: Option<u32>,
    rng: Option<SimRng>,
    started: u32,
    current: Option<Exchange>,
}

impl Ftp {
    /// Built (and validated) by [`super::build_app`].
    pub(crate) fn new(ends: Ends, size: u64, request: u64, gap: Option<AnyDist>, count: Option<u32>) -> Self {
        Ftp { ends, size, request, gap, count, rng: None, started: 0, current: None }
    }

    /// Transfers started so far.
    pub fn started(&self) -> u32 {
        self.started
    }

    fn next(&mut self, core: &mut Core, me: AppId) {
        if self.count.is_some_and(|c| self.started >= c) {
            return;
        }
        self.started += 1;
        self.current = Some(Exchange::open(core, me, &self.ends, self.request, self.size, LABEL));
    }
}

impl Application for Ftp {
    fn start(&mut self, core: &mut Core, me: AppId) {
        self.rng = Some(core.streams().stream(StreamKind::App, me as u64));
        self.next(core, me);
    }

    fn on_event(&mut self, core: &mut Core, me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        let Some(x) = self.current.as_mut().filter(|x| x.conn == conn) else { return };
        if x.on_event(core, side, ev) == Progress::Pending {
            return;
        }
        // Done or failed: either way the client moves on to the next transfer.
        self.current = None;
        match (&self.gap, self.rng.as_mut()) {
            (Some(gap), Some(rng)) => {
                let at = core.now() + draw_secs(gap, rng);
                core.set_timer(me, at, 0);
            }
            _ => self.next(core, me),
        }
    }

    fn on_timer(&mut self, core: &mut Core, me: AppId, _token: u64) {
        self.next(core, me);
    }
}
