//! PTO expirations per connection (RFC 9002 §6.2). quinn's `ConnectionStats` has no PTO count;
//! quinn-proto reports a PTO only as a TRACE event ("PTO fired", target
//! `quinn_proto::connection`), emitted from quinn's connection driver, which runs in the span
//! that was current when the connection was made (quinn's `Connecting::new` instruments the
//! driver with `Span::current()`). So each connection is made inside a span of its own, and a
//! layer on tracing-subscriber's registry adds every PTO event to the counter of the span it
//! happened in. Every other callsite is disabled, so quinn's tracing costs nothing more.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Span, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::{LookupSpan, Registry, SpanRef};

/// The name of a connection's span.
const SCOPE: &str = "quic_connection";

/// A connection's span (make the connection and run its task in it) and its PTO count.
pub struct Ptos(Span);

impl Ptos {
    pub fn new() -> Self {
        Ptos(tracing::info_span!("quic_connection"))
    }

    pub fn span(&self) -> Span {
        self.0.clone()
    }

    /// PTOs fired so far on the connections made in the span; `None` without [`install`].
    pub fn count(&self) -> Option<u64> {
        self.0
            .with_subscriber(|(id, dispatch)| {
                let span = dispatch.downcast_ref::<Registry>()?.span(id)?;
                let n = span.extensions().get::<Counter>()?.0.load(Ordering::Relaxed);
                Some(n)
            })
            .flatten()
    }
}

/// Makes the counting subscriber the process's (once; later calls change nothing).
pub fn install() {
    let _ = tracing::subscriber::set_global_default(Registry::default().with(CountPtos));
}

#[derive(Default)]
struct Counter(Arc<AtomicU64>);

struct CountPtos;

/// The callsites the layer needs: the connection spans and quinn-proto's TRACE event with
/// the PTO's `count` and `space` (as the engine's crates/iwlab-core/src/quic/trace_events.rs).
fn wanted(m: &Metadata<'_>) -> bool {
    if m.is_span() {
        return m.name() == SCOPE && m.target() == module_path!();
    }
    m.is_event()
        && *m.level() == Level::TRACE
        && m.target() == "quinn_proto::connection"
        && m.fields().field("count").is_some()
        && m.fields().field("space").is_some()
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for CountPtos {
    fn register_callsite(&self, m: &'static Metadata<'static>) -> Interest {
        if wanted(m) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, m: &Metadata<'_>, _: Context<'_, S>) -> bool {
        wanted(m)
    }

    fn on_new_span(&self, _: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Counter::default());
        }
    }

    fn on_event(&self, e: &Event<'_>, ctx: Context<'_, S>) {
        let mut m = Message(String::new());
        e.record(&mut m);
        if m.0 != "PTO fired" {
            return;
        }
        // The innermost span with a counter: the connection's, which quinn's driver runs in.
        let counter = |span: SpanRef<'_, S>| {
            let c = span.extensions().get::<Counter>().map(|c| c.0.clone());
            c
        };
        if let Some(c) = ctx.event_scope(e).and_then(|mut scope| scope.find_map(counter)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for quinn-proto's event: the same target, level, fields and message.
    fn pto_fired() {
        tracing::trace!(target: "quinn_proto::connection", in_flight = 1200u64, count = 0u32, space = "Data", "PTO fired");
    }

    #[test]
    fn a_pto_counts_on_the_connection_it_fired_in_and_nowhere_else() {
        let d = tracing::Dispatch::new(Registry::default().with(CountPtos));
        tracing::dispatcher::with_default(&d, || {
            let (a, b) = (Ptos::new(), Ptos::new());
            a.span().in_scope(pto_fired);
            a.span().in_scope(|| tracing::info_span!("inner").in_scope(pto_fired));
            b.span()
                .in_scope(|| tracing::trace!(target: "quinn_proto::connection", count = 0u32, space = "Data", "other"));
            pto_fired(); // outside every connection
            assert_eq!((a.count(), b.count()), (Some(2), Some(0)));
        });
    }

    #[test]
    fn without_the_subscriber_there_is_no_count() {
        let d = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
        tracing::dispatcher::with_default(&d, || assert_eq!(Ptos::new().count(), None));
    }
}
