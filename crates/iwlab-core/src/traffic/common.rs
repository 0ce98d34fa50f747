//! What the TCP applications share: opening a labelled connection between an application's
//! two ends, one request/response exchange on its own connection, a set of exchanges in
//! progress, and turning distribution draws into whole bytes and integer durations.

use super::Ends;
use crate::engine::{SimDuration, SimRng};
use crate::metrics::FlowLabel;
use crate::sim::{AppId, ConnId, ConnSpec, Core, Side};
use crate::tcp::endpoint::AppEvent;
use crate::traffic::dist::{AnyDist, SizeDist};
use std::collections::BTreeMap;

/// Opens a connection from `ends.client` to `ends.server` owned by application `me`. The
/// declared sizes (what each side will send) are what size-based IW policies see.
pub(crate) fn open(
    core: &mut Core,
    me: AppId,
    ends: &Ends,
    client_declared: Option<u64>,
    server_declared: Option<u64>,
    label: FlowLabel,
) -> ConnId {
    let spec = ConnSpec {
        client: ends.client,
        server: ends.server,
        client_cfg: &ends.client_tcp,
        server_cfg: &ends.server_tcp,
        client_iw: ends.client_iw,
        server_iw: ends.server_iw,
        client_declared,
        server_declared,
        app: Some(me),
        label,
    };
    ends.transport.open(core, &spec)
}

/// A draw rounded to whole bytes, at least `min` (NaN or negative draws give `min`).
pub(crate) fn draw_bytes(d: &AnyDist, rng: &mut SimRng, min: u64) -> u64 {
    // `as` saturates: NaN → 0, +∞ → u64::MAX.
    (d.sample(rng).round() as u64).max(min)
}

/// A draw in seconds as an integer duration (rounded to the nanosecond; negative → 0).
pub(crate) fn draw_secs(d: &AnyDist, rng: &mut SimRng) -> SimDuration {
    SimDuration::from_secs_f64(d.sample(rng))
}

/// How an exchange stands after an event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    Pending,
    /// The client has the whole response (and has closed its direction).
    Done,
    /// The handshake failed on one side; the response will never come.
    Failed,
}

/// One request/response on its own connection: the client writes `request` bytes; once the
/// server has all of them (at `Established` when `request` is 0) it writes `response` bytes
/// and closes; the client closes when it has the whole response (at the server's FIN when
/// `response` is 0).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Exchange {
    pub conn: ConnId,
    pub request: u64,
    pub response: u64,
    answered: bool,
    done: bool,
}

impl Exchange {
    /// Opens the connection (declaring both sizes) and writes the request.
    pub fn open(core: &mut Core, me: AppId, ends: &Ends, request: u64, response: u64, label: FlowLabel) -> Self {
        let conn = open(core, me, ends, Some(request), Some(response), label);
        if request > 0 {
            core.write(conn, Side::Client, request);
        }
        Exchange { conn, request, response, answered: false, done: false }
    }

    /// Acts on an event of this exchange's connection.
    pub fn on_event(&mut self, core: &mut Core, side: Side, ev: AppEvent) -> Progress {
        if self.done {
            return Progress::Pending;
        }
        match (side, ev) {
            (Side::Server, AppEvent::Established) if self.request == 0 => self.answer(core),
            (Side::Server, AppEvent::Delivered { total }) if total >= self.request => self.answer(core),
            (Side::Client, AppEvent::Delivered { total }) if self.response > 0 && total >= self.response => {
                return self.complete(core);
            }
            (Side::Client, AppEvent::PeerClosed) if self.response == 0 => return self.complete(core),
            (_, AppEvent::Failed) => {
                self.done = true;
                return Progress::Failed;
            }
            _ => {}
        }
        Progress::Pending
    }

    fn answer(&mut self, core: &mut Core) {
        if self.answered {
            return;
        }
        self.answered = true;
        core.write_and_close(self.conn, Side::Server, self.response);
    }

    fn complete(&mut self, core: &mut Core) -> Progress {
        self.done = true;
        core.close(self.conn, Side::Client);
        Progress::Done
    }
}

/// Exchanges in progress, by connection id (a `BTreeMap`: no order ever depends on hashing).
/// An exchange leaves the set when it is done or failed; events of connections not in the
/// set (closing handshakes of finished exchanges) are ignored.
#[derive(Default, Debug)]
pub(crate) struct Exchanges {
    live: BTreeMap<ConnId, Exchange>,
}

impl Exchanges {
    pub fn insert(&mut self, x: Exchange) {
        self.live.insert(x.conn, x);
    }

    /// Routes an event to its exchange; returns the exchange when this event finished it.
    pub fn on_event(
        &mut self,
        core: &mut Core,
        conn: ConnId,
        side: Side,
        ev: AppEvent,
    ) -> Option<(Exchange, Progress)> {
        let x = self.live.get_mut(&conn)?;
        match x.on_event(core, side, ev) {
            Progress::Pending => None,
            p => self.live.remove(&conn).map(|x| (x, p)),
        }
    }

    pub fn len(&self) -> usize {
        self.live.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{RngStreams, StreamKind};
    use crate::traffic::dist::DistConfig;

    fn draw(cfg: DistConfig, min: u64) -> u64 {
        let mut rng = RngStreams::new(1).stream(StreamKind::App, 0);
        draw_bytes(&cfg.build().unwrap(), &mut rng, min)
    }

    #[test]
    fn sizes_round_to_the_nearest_byte_and_respect_the_minimum() {
        assert_eq!(draw(DistConfig::Constant { value: 2.5 }, 1), 3);
        assert_eq!(draw(DistConfig::Constant { value: 2.49 }, 1), 2);
        assert_eq!(draw(DistConfig::Constant { value: 0.2 }, 1), 1);
        assert_eq!(draw(DistConfig::Constant { value: 0.2 }, 0), 0);
        assert_eq!(draw(DistConfig::Constant { value: 1e300 }, 1), u64::MAX);
    }

    #[test]
    fn seconds_become_whole_nanoseconds() {
        let mut rng = RngStreams::new(1).stream(StreamKind::App, 0);
        let d = DistConfig::Constant { value: 1.5e-9 }.build().unwrap();
        assert_eq!(draw_secs(&d, &mut rng), SimDuration::from_nanos(2));
    }
}
