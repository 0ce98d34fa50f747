//! The `iw_events` table: every IW decision and every event the policies of a run were given
//! (recorded when the run asks for it, `AnyIw::record`), one row each, in time order.
//!
//! Columns: `time` (s), `time_ns`, `instance` (index of the policy instance), `host` (its
//! node), `host_addr`, `policy` (the name of the policy that decided: the route's for a destination
//! a route covers, else the instance's), `kind` (`iw`: a new connection's IW; `restart`: a restart
//! window after idle; `loss_in_initial_window`; `closed`), `dst` (the peer node), `dst_addr` (the
//! hosts' addresses as the emulator gives them, `policy_file::sim_host_addresses`), `mss`,
//! `declared_size`, `iw_bytes` (the answer of `iw`/`restart`), `iw_loss_bytes` (`restart`),
//! and the event fields `bytes_sent`, `loss`, `cwnd` (bytes at close), `bytes_acked`,
//! `retrans` (zero where they do not apply).

use super::table::{Column, Table};
use crate::net::packet::NodeId;
use crate::scenario::IwInstance;
use crate::tcp::iw::{AnyIw, IwEventKind, IwRecord, IwRecordKind};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// The table of the records of `policies` (the simulation's `core.iw`), `instances[i]`
/// naming the host and policy of `policies[i]`, `addresses` the hosts' addresses. Rows sort
/// by time, then instance, then the order the instance saw them.
pub fn iw_event_table(instances: &[IwInstance], policies: &[AnyIw], addresses: &[(NodeId, IpAddr)]) -> Table {
    let addr: BTreeMap<NodeId, String> = addresses.iter().map(|(n, a)| (*n, a.to_string())).collect();
    let addr_of = |n: NodeId| addr.get(&n).cloned().unwrap_or_default();
    let mut rows: Vec<(usize, &IwRecord)> =
        policies.iter().enumerate().flat_map(|(i, p)| p.records().iter().map(move |r| (i, r))).collect();
    rows.sort_by_key(|(i, r)| (r.now, *i)); // stable: keeps each instance's order
    let n = rows.len();
    let (mut time, mut time_ns, mut instance, mut host, mut policy) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
    let (mut host_addr, mut dst_addr) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut kind, mut dst, mut mss, mut declared, mut iw, mut loss_bytes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut sent, mut loss, mut cwnd, mut acked, mut retrans) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, r) in rows {
        time.push(r.now.as_secs_f64());
        time_ns.push(r.now.as_nanos());
        instance.push(i as u64);
        host.push(instances.get(i).map_or(0, |x| x.node as u64));
        host_addr.push(instances.get(i).map_or_else(String::new, |x| addr_of(x.node)));
        dst_addr.push(addr_of(r.dst));
        // the route's policy where a route covers the destination: it decided, not the application's
        policy.push(match policies[i].route_policy(r.dst) {
            Some(name) => name.to_string(),
            None => instances.get(i).map_or_else(String::new, |x| x.policy.clone()),
        });
        dst.push(r.dst as u64);
        let (mut m, mut d, mut w, mut lb) = (0, None, 0, None);
        let (mut s, mut l, mut c, mut a, mut t) = (0, false, 0, 0, 0);
        let k = match r.what {
            IwRecordKind::Iw { mss, declared_size, window } => {
                (m, d, w) = (mss, declared_size.map(|x| x as f64), window);
                "iw"
            }
            IwRecordKind::Restart { mss, iw_loss_bytes, window } => {
                (m, lb, w) = (mss, iw_loss_bytes.map(|x| x as f64), window);
                "restart"
            }
            IwRecordKind::Event(IwEventKind::LossInInitialWindow { bytes_sent }) => {
                s = bytes_sent;
                "loss_in_initial_window"
            }
            IwRecordKind::Event(IwEventKind::Closed { bytes_sent, loss, cwnd, bytes_acked, retrans }) => {
                (s, l, c, a, t) = (bytes_sent, loss, cwnd, bytes_acked, retrans);
                "closed"
            }
        };
        kind.push(k.to_string());
        mss.push(m);
        declared.push(d);
        iw.push(w);
        loss_bytes.push(lb);
        sent.push(s);
        loss.push(l);
        cwnd.push(c);
        acked.push(a);
        retrans.push(t);
    }
    let mut t = Table::default();
    t.push("time", Column::F64(time));
    t.push("time_ns", Column::U64(time_ns));
    t.push("instance", Column::U64(instance));
    t.push("host", Column::U64(host));
    t.push("host_addr", Column::Str(host_addr));
    t.push("policy", Column::Str(policy));
    t.push("kind", Column::Str(kind));
    t.push("dst", Column::U64(dst));
    t.push("dst_addr", Column::Str(dst_addr));
    t.push("mss", Column::U64(mss));
    t.push("declared_size", Column::OptF64(declared));
    t.push("iw_bytes", Column::U64(iw));
    t.push("iw_loss_bytes", Column::OptF64(loss_bytes));
    t.push("bytes_sent", Column::U64(sent));
    t.push("loss", Column::Bool(loss));
    t.push("cwnd", Column::U64(cwnd));
    t.push("bytes_acked", Column::U64(acked));
    t.push("retrans", Column::U64(retrans));
    t
}
