//! quinn-proto reports two things a flow record needs only as trace events: a PTO firing
//! ("PTO fired", RFC 9002 §6.2) and a send stopped by the anti-amplification limit
//! ("blocked by anti-amplification", RFC 9000 §8.1). A subscriber, installed only while the
//! engine drives a connection, counts them per thread.

use std::cell::Cell;
use std::fmt::Write;
use std::sync::OnceLock;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Level, Metadata, Subscriber};

thread_local! {
    static PTO: Cell<u64> = const { Cell::new(0) };
    static AMP_BLOCKED: Cell<u64> = const { Cell::new(0) };
}

/// Counts of the two events so far on this thread.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub pto: u64,
    pub amp_blocked: u64,
}

impl Counts {
    pub fn now() -> Self {
        Counts { pto: PTO.with(Cell::get), amp_blocked: AMP_BLOCKED.with(Cell::get) }
    }
    pub fn since(self, before: Counts) -> Counts {
        Counts { pto: self.pto - before.pto, amp_blocked: self.amp_blocked - before.amp_blocked }
    }
}

struct QuinnEvents;

/// The callsites of the two events: TRACE events of quinn-proto's connection module whose
/// fields are the message alone ("blocked by anti-amplification") or the message with the
/// PTO's `in_flight`, `count` and `space`.
fn wanted(m: &Metadata<'_>) -> bool {
    if !m.is_event() || *m.level() != Level::TRACE || m.target() != "quinn_proto::connection" {
        return false;
    }
    let names: Vec<&str> = m.fields().iter().map(|f| f.name()).collect();
    names == ["message"] || (names.contains(&"message") && names.contains(&"count") && names.contains(&"space"))
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        }
    }
}

impl Subscriber for QuinnEvents {
    fn register_callsite(&self, m: &'static Metadata<'static>) -> Interest {
        if wanted(m) {
            Interest::always()
        } else {
            Interest::never()
        }
    }
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        wanted(m)
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, e: &Event<'_>) {
        let mut m = Message(String::new());
        e.record(&mut m);
        match m.0.as_str() {
            "PTO fired" => PTO.with(|c| c.set(c.get() + 1)),
            "blocked by anti-amplification" => AMP_BLOCKED.with(|c| c.set(c.get() + 1)),
            _ => {}
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Runs `f` with the counting subscriber as this thread's default.
pub fn counting<R>(f: impl FnOnce() -> R) -> R {
    static DISPATCH: OnceLock<Dispatch> = OnceLock::new();
    let d = DISPATCH.get_or_init(|| Dispatch::new(QuinnEvents));
    tracing::dispatcher::with_default(d, f)
}
