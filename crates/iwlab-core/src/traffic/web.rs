//! A web client (the RFC 2415 study, docs/studies.md): pages of one primary object and a drawn number of embedded
//! objects, then a think time, `pages` times or until the run ends.
//!
//! * HTTP/1.0: the primary is a request/response on its own connection; the instant its
//!   last byte arrives, every embedded object is requested on its own new connection, all
//!   opened at once.
//! * HTTP/1.1: one persistent connection per page. The client requests the primary; when
//!   it is complete it writes all embedded requests at once (pipelined). The server counts
//!   delivered request bytes and answers object *i* as soon as request *i* has fully
//!   arrived, back to back; the client knows an object is complete from the cumulative
//!   bytes delivered. The client closes at page end; the server closes when it sees the
//!   client's FIN. HTTP/1.1 needs `request_bytes > 0` (requests are told apart by bytes).
//!
//! At page start the application draws, from its own stream and in this order: the primary
//! size, the embedded count (rounded to a whole number ≥ 0, at most [`MAX_EMBEDDED`]) and
//! each embedded size (sizes in whole bytes, at least 1). The think time is drawn when the
//! page ends; the next page starts that many seconds later.
//!
//! Each page becomes a [`PageRecord`] in `core.records.pages` when it ends: start = when the
//! primary's connection opened, end = when the last object was completely received. A page
//! still loading when the run ends is recorded with `end: None` by
//! [`Application::finish`]; so is a page one of whose connections failed its handshake (the
//! client then gives up on the page once its other objects are in, thinks and goes on).
//!
//! Connection sizes declared to the IW policy: HTTP/1.0, each object's request and size;
//! HTTP/1.1, all the page's request bytes and all its object bytes (the flow's size).

use super::common::{draw_bytes, draw_secs, open, Exchange, Exchanges, Progress};
use super::{Ends, HttpVersion};
use crate::engine::{SimRng, StreamKind};
use crate::metrics::{FlowLabel, PageRecord};
use crate::sim::{AppId, Application, ConnId, Core, Side};
use crate::tcp::endpoint::AppEvent;
use crate::traffic::dist::{AnyDist, SizeDist};

/// Embedded objects per page are capped here, so that a heavy-tailed count distribution
/// cannot ask for billions of connections.
pub const MAX_EMBEDDED: u32 = 65_535;

pub struct Web {
    ends: Ends,
    version: HttpVersion,
    request: u64,
    primary: AnyDist,
    embedded: AnyDist,
    embedded_count: AnyDist,
    think: AnyDist,
    pages: Option<u32>,
    rng: Option<SimRng>,
    started: u32,
    page: Option<Page>,
}

/// The page being loaded.
struct Page {
    record: PageRecord,
    /// Object sizes, primary first.
    sizes: Vec<u64>,
    failed: bool,
    conns: Conns,
}

enum Conns {
    Http10 {
        /// Until the primary is complete.
        primary: Option<Exchange>,
        embedded: Exchanges,
        /// Embedded objects not yet finished.
        pending: usize,
    },
    Http11 {
        conn: ConnId,
        /// Objects the server has written.
        served: usize,
        embedded_requested: bool,
    },
}

impl Web {
    /// Built (and validated) by [`super::build_app`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        ends: Ends,
        version: HttpVersion,
        request: u64,
        primary: AnyDist,
        embedded: AnyDist,
        embedded_count: AnyDist,
        think: AnyDist,
        pages: Option<u32>,
    ) -> Self {
        debug_assert!(version == HttpVersion::Http10 || request > 0);
        Web {
            ends,
            version,
            request,
            primary,
            embedded,
            embedded_count,
            think,
            pages,
            rng: None,
            started: 0,
            page: None,
        }
    }

    /// Pages started so far.
    pub fn pages_started(&self) -> u32 {
        self.started
    }

    fn start_page(&mut self, core: &mut Core, me: AppId) {
        if self.pages.is_some_and(|n| self.started >= n) {
            return;
        }
        self.started += 1;
        let rng = self.rng.as_mut().expect("started");
        let primary = draw_bytes(&self.primary, rng, 1);
        // `as` saturates: NaN and negative draws give 0.
        let k = (self.embedded_count.sample(rng).round() as u32).min(MAX_EMBEDDED);
        let mut sizes = Vec::with_capacity(1 + k as usize);
        sizes.push(primary);
        for _ in 0..k {
            sizes.push(draw_bytes(&self.embedded, rng, 1));
        }
        let bytes = sizes.iter().fold(0u64, |a, &s| a.saturating_add(s));
        let page = core.next_page_id();
        let record = PageRecord {
            page,
            app: me,
            client: self.ends.client,
            server: self.ends.server,
            start: core.now(),
            end: None,
            objects: 1 + k,
            bytes,
        };
        let conns = match self.version {
            HttpVersion::Http10 => {
                let label = FlowLabel { app_kind: "web", role: "primary", page: Some(page) };
                let x = Exchange::open(core, me, &self.ends, self.request, primary, label);
                Conns::Http10 { primary: Some(x), embedded: Exchanges::default(), pending: 0 }
            }
            HttpVersion::Http11 => {
                let label = FlowLabel { app_kind: "web", role: "page", page: Some(page) };
                let requests = self.request.saturating_mul(1 + k as u64);
                let conn = open(core, me, &self.ends, Some(requests), Some(bytes), label);
                core.write(conn, Side::Client, self.request);
                Conns::Http11 { conn, served: 0, embedded_requested: false }
            }
        };
        self.page = Some(Page { record, sizes, failed: false, conns });
    }

    /// Records the page and schedules the next one after a think time.
    fn end_page(&mut self, core: &mut Core, me: AppId) {
        let Some(mut page) = self.page.take() else { return };
        if !page.failed {
            page.record.end = Some(core.now());
        }
        core.records.pages.push(page.record);
        if self.pages.is_some_and(|n| self.started >= n) {
            return;
        }
        let rng = self.rng.as_mut().expect("started");
        let at = core.now() + draw_secs(&self.think, rng);
        core.set_timer(me, at, 0);
    }
}

impl Page {
    /// HTTP/1.0: routes an event to the primary or an embedded exchange; true when the
    /// page is finished.
    fn on_event_http10(
        &mut self,
        core: &mut Core,
        me: AppId,
        (ends, request): (&Ends, u64),
        (conn, side, ev): (ConnId, Side, AppEvent),
    ) -> bool {
        let Conns::Http10 { primary, embedded, pending } = &mut self.conns else { unreachable!() };
        if let Some(x) = primary.as_mut().filter(|x| x.conn == conn) {
            match x.on_event(core, side, ev) {
                Progress::Pending => false,
                Progress::Failed => {
                    *primary = None;
                    self.failed = true;
                    true
                }
                Progress::Done => {
                    *primary = None;
                    let label = FlowLabel { app_kind: "web", role: "embedded", page: Some(self.record.page) };
                    for &size in &self.sizes[1..] {
                        embedded.insert(Exchange::open(core, me, ends, request, size, label));
                    }
                    *pending = self.sizes.len() - 1;
                    *pending == 0
                }
            }
        } else if let Some((_, p)) = embedded.on_event(core, conn, side, ev) {
            self.failed |= p == Progress::Failed;
            *pending -= 1;
            *pending == 0
        } else {
            false
        }
    }

    /// HTTP/1.1: the page's one connection; true when the page is finished.
    fn on_event_http11(&mut self, core: &mut Core, request: u64, conn: ConnId, side: Side, ev: AppEvent) -> bool {
        let Conns::Http11 { conn: c, served, embedded_requested } = &mut self.conns else { unreachable!() };
        if *c != conn {
            return false;
        }
        match (side, ev) {
            (Side::Server, AppEvent::Delivered { total }) => {
                // Answer every request that has fully arrived, in order.
                let asked = (total / request).min(self.sizes.len() as u64) as usize;
                while *served < asked {
                    core.write(conn, Side::Server, self.sizes[*served]);
                    *served += 1;
                }
                false
            }
            (Side::Client, AppEvent::Delivered { total }) => {
                if !*embedded_requested && total >= self.sizes[0] {
                    *embedded_requested = true;
                    let k = self.sizes.len() as u64 - 1;
                    if k > 0 {
                        core.write(conn, Side::Client, request.saturating_mul(k));
                    }
                }
                if total >= self.record.bytes {
                    core.close(conn, Side::Client);
                    return true;
                }
                false
            }
            (_, AppEvent::Failed) => {
                self.failed = true;
                true
            }
            _ => false,
        }
    }
}

impl Application for Web {
    fn start(&mut self, core: &mut Core, me: AppId) {
        self.rng = Some(core.streams().stream(StreamKind::App, me as u64));
        self.start_page(core, me);
    }

    fn on_event(&mut self, core: &mut Core, me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        if self.version == HttpVersion::Http11 && side == Side::Server && ev == AppEvent::PeerClosed {
            // The client closed at page end (possibly of an earlier page): close ours too.
            core.close(conn, Side::Server);
            return;
        }
        let Some(page) = self.page.as_mut() else { return };
        let finished = match self.version {
            HttpVersion::Http10 => page.on_event_http10(core, me, (&self.ends, self.request), (conn, side, ev)),
            HttpVersion::Http11 => page.on_event_http11(core, self.request, conn, side, ev),
        };
        if finished {
            self.end_page(core, me);
        }
    }

    fn on_timer(&mut self, core: &mut Core, me: AppId, _token: u64) {
        self.start_page(core, me);
    }

    /// Records the page still loading, if any, with `end: None`.
    fn finish(&mut self, core: &mut Core, _me: AppId) {
        if let Some(page) = self.page.take() {
            core.records.pages.push(page.record);
        }
    }
}
