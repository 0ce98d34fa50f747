//! One row per TCP connection, read off the simulation.

use super::{secs, Table};
use crate::col;
use crate::engine::SimTime;
use crate::sim::core::{Conn, Core, Side};
use crate::tcp::iw::IwPolicy;

#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub flow: u32,
    /// Application that opened it (`u32::MAX`: none).
    pub app: u32,
    pub app_kind: &'static str,
    pub role: &'static str,
    pub page: Option<u64>,
    pub client: u32,
    pub server: u32,
    /// "server" when the response is the larger direction, else "client".
    pub sender: &'static str,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// Bytes the data receiver got, in order.
    pub delivered_bytes: u64,
    /// The data sender's initial window and policy.
    pub iw_bytes: u64,
    pub iw_segments: f64,
    pub iw_policy: &'static str,
    pub start: f64,
    /// When the client saw the SYN-ACK.
    pub syn_ack: Option<f64>,
    /// When the data receiver got its first and last byte.
    pub first_byte: Option<f64>,
    pub last_byte: Option<f64>,
    /// last_byte − start, for completed flows.
    pub completion: Option<f64>,
    /// Data segments sent by both ends, retransmissions included.
    pub data_segments: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub syn_retransmits: u64,
    /// Data segments that arrived CE-marked, both directions.
    pub ecn_marks: u64,
    pub max_cwnd: u64,
    pub completed: bool,
    /// Started before the warm-up ended (excluded from statistics).
    pub in_warmup: bool,
    /// With a scenario's names ([`super::Records::names`]): the application's name and the
    /// server's IW policy name (the `[iw.policies]` key); the columns exist only then.
    pub app_name: Option<String>,
    pub server_iw: Option<String>,
}

fn flow_record(id: usize, c: &Conn, core: &Core, warmup: SimTime) -> FlowRecord {
    let names = core.records.names.as_deref();
    // Live or retired, the connection's endpoints as the record sees them.
    let (ce, se) = (c.client(), c.server());
    // The data sender is the side that declared, or failing that wrote, more bytes (bulk
    // flows declare nothing, like iperf).
    let server_bytes = c.response_bytes.max(se.bytes_written);
    let client_bytes = c.request_bytes.max(ce.bytes_written);
    let (sender_side, receiver_side) =
        if server_bytes >= client_bytes { (Side::Server, Side::Client) } else { (Side::Client, Side::Server) };
    let (snd, rcv) = if sender_side == Side::Server { (&se, &ce) } else { (&ce, &se) };
    let expected = c.request_bytes.max(c.response_bytes);
    let delivered = rcv.delivered;
    let completed = expected > 0 && se.delivered >= c.request_bytes && ce.delivered >= c.response_bytes;
    let last = c.last_byte[receiver_side as usize];
    let policy = match sender_side {
        Side::Server => c.server_iw,
        Side::Client => c.client_iw,
    };
    #[cfg(feature = "quic")]
    let iw_policy = core.quic_stats(id as u32).map_or_else(|| core.iw[policy].name(), |q| q.stack);
    #[cfg(not(feature = "quic"))]
    let iw_policy = core.iw[policy].name();
    FlowRecord {
        flow: id as u32,
        app: c.app.unwrap_or(u32::MAX),
        app_kind: c.label.app_kind,
        role: c.label.role,
        page: c.label.page,
        client: c.client_node,
        server: c.server_node,
        sender: if sender_side == Side::Server { "server" } else { "client" },
        request_bytes: c.request_bytes,
        response_bytes: c.response_bytes,
        delivered_bytes: delivered,
        iw_bytes: snd.stats.iw_bytes,
        iw_segments: snd.stats.iw_bytes as f64 / snd.mss as f64,
        iw_policy,
        start: secs(c.opened_at),
        syn_ack: ce.stats.established_at.map(secs),
        first_byte: c.first_byte[receiver_side as usize].map(secs),
        last_byte: last.map(secs),
        completion: if completed { last.map(|t| (t - c.opened_at).as_secs_f64()) } else { None },
        data_segments: ce.sender.data_segments_sent + se.sender.data_segments_sent,
        retransmits: ce.sender.retransmits + se.sender.retransmits,
        timeouts: ce.sender.timeouts + se.sender.timeouts,
        fast_retransmits: ce.sender.fast_retransmits + se.sender.fast_retransmits,
        syn_retransmits: (ce.stats.syn_retransmits + se.stats.syn_retransmits) as u64,
        ecn_marks: ce.stats.ce_received + se.stats.ce_received,
        max_cwnd: snd.sender.max_cwnd,
        completed,
        in_warmup: c.opened_at < warmup,
        app_name: names.map(|n| c.app.and_then(|a| n.apps.get(a as usize)).cloned().unwrap_or_default()),
        server_iw: names.map(|n| n.iw.get(c.server_iw).cloned().unwrap_or_default()),
    }
}

/// Every connection of the simulation, as rows.
pub fn flow_records(core: &Core, warmup: SimTime) -> Vec<FlowRecord> {
    core.conns.iter().enumerate().map(|(i, c)| flow_record(i, c, core, warmup)).collect()
}

/// Every connection of the simulation, as columns, and how many of them completed. Built
/// `CHUNK` rows at a time, so that the rows of a long run never all exist at once beside
/// their columns (1 M flows: 272 MB less at the peak); the same table as
/// `flow_table(&flow_records(..))`.
pub fn flow_table_of(core: &Core, warmup: SimTime) -> (Table, u64) {
    flow_table_in_chunks(core, warmup, 1 << 16)
}

/// [`flow_table_of`], `chunk` rows at a time.
pub fn flow_table_in_chunks(core: &Core, warmup: SimTime, chunk: usize) -> (Table, u64) {
    let mut table = Table::default();
    let completed = for_each_flow_chunk(core, warmup, chunk, |t| {
        table.append(t);
        Ok::<(), std::convert::Infallible>(())
    });
    (table, completed.unwrap_or_else(|e| match e {}))
}

/// Hands the flow rows to `emit` as tables of at most `chunk` rows each, in flow order (one
/// empty table when there are no flows, so that the schema always arrives), and returns how
/// many flows completed. A caller that writes each chunk away holds one chunk, not every flow:
/// the way records leave the engine at scale.
pub fn for_each_flow_chunk<E>(
    core: &Core,
    warmup: SimTime,
    chunk: usize,
    mut emit: impl FnMut(Table) -> Result<(), E>,
) -> Result<u64, E> {
    let named = core.records.names.is_some();
    let mut completed = 0;
    let mut rows = Vec::with_capacity(chunk.min(core.conns.len()));
    for (start, chunk) in core.conns.chunks(chunk).enumerate().map(|(k, c)| (k * chunk, c)) {
        rows.clear();
        rows.extend(chunk.iter().enumerate().map(|(i, c)| flow_record(start + i, c, core, warmup)));
        completed += rows.iter().filter(|f| f.completed).count() as u64;
        let mut t = flow_table_named(&rows, named);
        #[cfg(feature = "quic")]
        if core.has_quic() {
            quic_columns(&mut t, core, &rows);
        }
        emit(t)?;
    }
    if core.conns.is_empty() {
        emit(flow_table_named(&[], named))?;
    }
    Ok(completed)
}

/// The flow rows as columns (with `app_name` and `server_iw` when the rows carry them).
pub fn flow_table(rows: &[FlowRecord]) -> Table {
    flow_table_named(rows, rows.first().is_some_and(|r| r.app_name.is_some()))
}

/// The flow rows as columns; `named`: with the `app_name` and `server_iw` columns at the end.
fn flow_table_named(rows: &[FlowRecord], named: bool) -> Table {
    let mut t = Table::default();
    t.push("flow", col!(rows, U64, |r| r.flow as u64));
    t.push("app", col!(rows, I64, |r| if r.app == u32::MAX { -1 } else { r.app as i64 }));
    t.push("app_kind", col!(rows, Str, |r| r.app_kind.to_string()));
    t.push("role", col!(rows, Str, |r| r.role.to_string()));
    t.push("page", col!(rows, I64, |r| r.page.map_or(-1, |p| p as i64)));
    t.push("client", col!(rows, U64, |r| r.client as u64));
    t.push("server", col!(rows, U64, |r| r.server as u64));
    t.push("sender", col!(rows, Str, |r| r.sender.to_string()));
    t.push("request_bytes", col!(rows, U64, |r| r.request_bytes));
    t.push("response_bytes", col!(rows, U64, |r| r.response_bytes));
    t.push("delivered_bytes", col!(rows, U64, |r| r.delivered_bytes));
    t.push("iw_bytes", col!(rows, U64, |r| r.iw_bytes));
    t.push("iw_segments", col!(rows, F64, |r| r.iw_segments));
    t.push("iw_policy", col!(rows, Str, |r| r.iw_policy.to_string()));
    t.push("start", col!(rows, F64, |r| r.start));
    t.push("syn_ack", col!(rows, OptF64, |r| r.syn_ack));
    t.push("first_byte", col!(rows, OptF64, |r| r.first_byte));
    t.push("last_byte", col!(rows, OptF64, |r| r.last_byte));
    t.push("completion", col!(rows, OptF64, |r| r.completion));
    t.push("data_segments", col!(rows, U64, |r| r.data_segments));
    t.push("retransmits", col!(rows, U64, |r| r.retransmits));
    t.push("timeouts", col!(rows, U64, |r| r.timeouts));
    t.push("fast_retransmits", col!(rows, U64, |r| r.fast_retransmits));
    t.push("syn_retransmits", col!(rows, U64, |r| r.syn_retransmits));
    t.push("ecn_marks", col!(rows, U64, |r| r.ecn_marks));
    t.push("max_cwnd", col!(rows, U64, |r| r.max_cwnd));
    t.push("completed", col!(rows, Bool, |r| r.completed));
    t.push("in_warmup", col!(rows, Bool, |r| r.in_warmup));
    if named {
        t.push("app_name", col!(rows, Str, |r| r.app_name.clone().unwrap_or_default()));
        t.push("server_iw", col!(rows, Str, |r| r.server_iw.clone().unwrap_or_default()));
    }
    t
}

/// What a QUIC flow adds to its row (see [`crate::quic::QuicStats`]); times in seconds from
/// the connection's start.
#[cfg(feature = "quic")]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuicFlowRecord {
    /// The client's handshake completed (quinn-proto `Connected`).
    pub handshake: Option<f64>,
    /// The client's first response byte.
    pub ttfb: Option<f64>,
    /// The server's datagrams from its first response byte until it next heard from the
    /// client (one round trip), and their UDP payload bytes.
    pub first_flight_bytes: u64,
    pub first_flight_packets: u64,
    /// The server stopped at least once on RFC 9000 §8.1's 3x limit.
    pub amp_blocked: bool,
    /// PTO expirations, both ends (RFC 9002 §6.2).
    pub pto_count: u64,
}

/// The QUIC columns of flow `id` (`None`: a TCP flow).
#[cfg(feature = "quic")]
pub fn quic_record(core: &Core, id: usize) -> Option<QuicFlowRecord> {
    let q = core.quic_stats(id as u32)?;
    let c = &core.conns[id];
    let since = |t: Option<SimTime>| t.map(|t| (t - c.opened_at).as_secs_f64());
    Some(QuicFlowRecord {
        handshake: since(q.handshake_done[Side::Client as usize]),
        ttfb: since(c.first_byte[Side::Client as usize]),
        first_flight_bytes: q.first_flight_bytes,
        first_flight_packets: q.first_flight_packets,
        amp_blocked: q.amp_blocked,
        pto_count: q.pto[0] + q.pto[1],
    })
}

/// Columns a run with QUIC flows adds to the flow table (null on TCP rows); a run without
/// QUIC flows has the TCP table unchanged.
#[cfg(feature = "quic")]
fn quic_columns(t: &mut Table, core: &Core, rows: &[FlowRecord]) {
    let q: Vec<Option<QuicFlowRecord>> = rows.iter().map(|r| quic_record(core, r.flow as usize)).collect();
    let f = |g: fn(&QuicFlowRecord) -> Option<f64>| -> Vec<Option<f64>> { q.iter().map(|x| x.as_ref().and_then(g)).collect() };
    t.push("transport", col!(q, Str, |x| if x.is_some() { "quic" } else { "tcp" }.to_string()));
    t.push("handshake", super::Column::OptF64(f(|x| x.handshake)));
    t.push("ttfb", super::Column::OptF64(f(|x| x.ttfb)));
    t.push("first_flight_bytes", super::Column::OptF64(f(|x| Some(x.first_flight_bytes as f64))));
    t.push("first_flight_packets", super::Column::OptF64(f(|x| Some(x.first_flight_packets as f64))));
    t.push("amp_blocked", super::Column::OptF64(f(|x| Some(x.amp_blocked as u8 as f64))));
    t.push("pto_count", super::Column::OptF64(f(|x| Some(x.pto_count as f64))));
}
