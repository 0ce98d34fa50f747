//! Per-prefix sums of the evidence program's close records, so that `iwlab watch` reads one line
//! per prefix and interval instead of one per connection.
//!
//! Measured (bench/watch_evidence.py, idle machine, 10 000 connections/s): with one JSON line per
//! connection the watcher spent ~48 µs per connection, almost all of it in the interpreter
//! (parsing the line, matching the peer, feeding the policy). The sums keep what the watcher
//! counts per prefix (connections, data segments, retransmissions, RTT) and what the
//! fleet view asks for (IW segments sent, their retransmissions, bytes acked).
//!
//! Exactness. The watcher gives the table (`--prefix KEY=MODE`, one per policy route, KEY its
//! CIDR or `default`), and matches a peer as the watcher does (`iwlab_prefix::peer_match`): the
//! longest prefix of the peer's family (v4-mapped IPv6 as IPv4), the first of equal length, else
//! `default`; loopback and uncovered peers are dropped, as the watcher drops them. A route in
//! mode `sum` has a policy whose decisions depend only on IW-loss events (its `learn` ignores
//! `closed`: `iwlab_core::tcp::iw::IwConfig::SUMMARY_KINDS`, which the watcher gives the
//! modes from; tests/test_evidence_summary.py checks each against the Decider), so summing its clean closes cannot change a decision. Every IW-loss record
//! (`iw_retrans`, `rs_retrans`) and every close that carries IW or restart-window
//! retransmissions stays a line of its own, in ring-buffer order (the close gives the evidence
//! when the ring lost its record). Mode `each` (aimd counts consecutive clean connections,
//! learned keeps each connection's window at close) keeps one line per connection.
use std::{
    io::{self, Write},
    net::IpAddr,
};

use iwlab_prefix::Prefix;

use crate::Error;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Clean closes are summed.
    Sum,
    /// Every close is a line.
    Each,
}

/// What becomes of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Not covered by a route, or loopback: the watcher would ignore it.
    Drop,
    /// Written as a line of its own.
    Line,
    /// Added to its prefix's sums.
    Summed,
}

/// One prefix's sums since the last `write`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sum {
    pub connections: u64,
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    /// Segments of the initial window sent: ⌈min(bytes sent, IW·MSS) / MSS⌉ per connection.
    pub iw_segments_sent: u64,
    pub iw_retrans: u64,
    /// Connections with any retransmission.
    pub lossy: u64,
    pub data_segs_out: u64,
    pub total_retrans: u64,
    pub rtt_us_sum: u64,
    pub rtt_n: u64,
    /// min RTT of the last connection with an RTT sample (the watcher's gauge), 0: none.
    pub last_min_rtt_us: u64,
    pub restarts: u64,
    /// Segments sent in restart windows.
    pub rs_segments_sent: u64,
    pub rs_retrans: u64,
}

/// A `--prefix KEY=MODE` item: one route of the watcher's policy file.
struct Entry {
    key: String,
    prefix: Prefix,
    mode: Mode,
}

/// The watcher's routes and their sums.
pub struct Table {
    routes: Vec<Entry>,
    sums: Vec<Sum>,
}

impl Table {
    /// From `KEY=MODE` items: KEY a CIDR or `default`, MODE `sum` or `each`.
    pub fn parse(items: &[String]) -> Result<Table, Error> {
        let mut routes = vec![];
        for item in items {
            let bad = |why: &str| Error::Usage(format!("--prefix = {item:?}: {why}"));
            let (key, mode) = item.split_once('=').ok_or_else(|| bad("allowed KEY=sum or KEY=each"))?;
            let mode = match mode {
                "sum" => Mode::Sum,
                "each" => Mode::Each,
                _ => return Err(bad("the mode allowed is sum or each")),
            };
            let prefix = Prefix::parse(key).map_err(|why| bad(&why))?;
            routes.push(Entry { key: key.to_string(), prefix, mode });
        }
        let sums = vec![Sum::default(); routes.len()];
        Ok(Table { routes, sums })
    }

    /// The route of a peer (index), as the watcher matches it (`iwlab_prefix::peer_match`);
    /// None for loopback or uncovered.
    pub fn lookup(&self, ip: IpAddr) -> Option<usize> {
        iwlab_prefix::peer_match(self.routes.iter().map(|r| &r.prefix), ip)
    }

    #[cfg(test)]
    fn key(&self, i: usize) -> &str {
        &self.routes[i].key
    }

    /// What to do with a record: `iw_loss` whether it carries evidence (an IW-loss record, or a
    /// close with IW or restart-window retransmissions); a clean close of a `sum` route is added.
    pub fn route(&mut self, peer: IpAddr, close: bool, c: &Close) -> Route {
        let Some(i) = self.lookup(peer) else { return Route::Drop };
        if !close || c.iw_retrans > 0 || c.rs_retrans > 0 || self.routes[i].mode == Mode::Each {
            return if close && c.bytes_sent == 0 { Route::Drop } else { Route::Line };
        }
        if c.bytes_sent == 0 {
            return Route::Drop; // a FIN only: the watcher counts connections that sent data
        }
        let s = &mut self.sums[i];
        s.connections += 1;
        s.bytes_sent += c.bytes_sent as u64;
        s.bytes_acked += c.bytes_acked.min(c.bytes_sent) as u64;
        let mss = c.mss.max(1) as u64;
        s.iw_segments_sent += (c.bytes_sent as u64).min(c.iw_segments as u64 * mss).div_ceil(mss);
        s.iw_retrans += c.iw_retrans as u64;
        s.lossy += (c.total_retrans > 0) as u64;
        s.data_segs_out += c.data_segs_out as u64;
        s.total_retrans += c.total_retrans as u64;
        if 0 < c.min_rtt_us && c.min_rtt_us < u32::MAX {
            s.rtt_us_sum += c.min_rtt_us as u64;
            s.rtt_n += 1;
            s.last_min_rtt_us = c.min_rtt_us as u64;
        }
        s.restarts += c.restarts as u64;
        s.rs_segments_sent += c.rs_segments as u64;
        s.rs_retrans += c.rs_retrans as u64;
        Route::Summed
    }

    /// One `{"kind":"summary",…}` line per prefix with connections since the last call; resets.
    pub fn write(&mut self, out: &mut impl Write) -> io::Result<usize> {
        let mut n = 0;
        for (p, s) in self.routes.iter().zip(self.sums.iter_mut()) {
            if s.connections == 0 {
                continue;
            }
            writeln!(
                out,
                "{{\"kind\":\"summary\",\"prefix\":\"{}\",\"connections\":{},\"bytes_sent\":{},\"bytes_acked\":{},\
                 \"iw_segments_sent\":{},\"iw_retrans\":{},\"lossy\":{},\"data_segs_out\":{},\"total_retrans\":{},\
                 \"rtt_us_sum\":{},\"rtt_n\":{},\"last_min_rtt_us\":{},\"restarts\":{},\"rs_segments_sent\":{},\
                 \"rs_retrans\":{}}}",
                p.key,
                s.connections,
                s.bytes_sent,
                s.bytes_acked,
                s.iw_segments_sent,
                s.iw_retrans,
                s.lossy,
                s.data_segs_out,
                s.total_retrans,
                s.rtt_us_sum,
                s.rtt_n,
                s.last_min_rtt_us,
                s.restarts,
                s.rs_segments_sent,
                s.rs_retrans
            )?;
            *s = Sum::default();
            n += 1;
        }
        Ok(n)
    }

    #[cfg(test)]
    fn sum(&self, key: &str) -> Sum {
        self.sums[self.routes.iter().position(|p| p.key == key).unwrap()]
    }
}

/// The fields of a close record the sums take.
#[derive(Clone, Copy, Debug, Default)]
pub struct Close {
    pub bytes_sent: u32,
    pub bytes_acked: u32,
    pub mss: u32,
    pub iw_segments: u32,
    pub iw_retrans: u32,
    pub total_retrans: u32,
    pub data_segs_out: u32,
    pub min_rtt_us: u32,
    pub restarts: u32,
    pub rs_retrans: u32,
    pub rs_segments: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(items: &[&str]) -> Table {
        Table::parse(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }
    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_longest_prefix_of_the_family_wins_then_the_default_route() {
        let t = table(&["10.0.0.0/8=sum", "10.1.0.0/16=each", "2001:db8::/32=sum", "default=each"]);
        let key = |a: &str| t.lookup(ip(a)).map(|i| t.key(i).to_string());
        assert_eq!(key("10.1.2.3").as_deref(), Some("10.1.0.0/16"));
        assert_eq!(key("10.2.2.3").as_deref(), Some("10.0.0.0/8"));
        assert_eq!(key("::ffff:10.1.0.9").as_deref(), Some("10.1.0.0/16")); // v4-mapped is IPv4
        assert_eq!(key("2001:db8::1").as_deref(), Some("2001:db8::/32"));
        assert_eq!(key("192.0.2.1").as_deref(), Some("default"));
        assert_eq!(key("127.0.0.1"), None); // loopback: the watcher ignores it
        assert_eq!(key("::1"), None);
        let t = table(&["10.0.0.0/8=sum", "0.0.0.0/0=each"]);
        assert_eq!(t.lookup(ip("192.0.2.1")).map(|i| t.key(i)), Some("0.0.0.0/0"));
        assert_eq!(t.lookup(ip("2001:db8::1")), None); // no IPv6 route, no default
    }

    #[test]
    fn clean_closes_of_a_sum_route_are_summed_and_evidence_stays_a_line() {
        let mut t = table(&["10.0.0.0/8=sum", "10.9.0.0/16=each"]);
        let clean = Close {
            bytes_sent: 15_000,
            bytes_acked: 15_000,
            mss: 1448,
            iw_segments: 10,
            total_retrans: 2, // retransmissions beyond the IW: no evidence, summed
            data_segs_out: 11,
            min_rtt_us: 20_000,
            ..Default::default()
        };
        assert_eq!(t.route(ip("10.1.1.1"), true, &clean), Route::Summed);
        assert_eq!(t.route(ip("10.1.1.2"), true, &Close { min_rtt_us: u32::MAX, ..clean }), Route::Summed);
        assert_eq!(t.route(ip("10.1.1.3"), true, &Close { iw_retrans: 1, ..clean }), Route::Line);
        assert_eq!(t.route(ip("10.1.1.3"), true, &Close { rs_retrans: 1, ..clean }), Route::Line);
        assert_eq!(t.route(ip("10.1.1.3"), false, &clean), Route::Line); // an IW-loss record
        assert_eq!(t.route(ip("10.9.1.1"), true, &clean), Route::Line); // mode each
        assert_eq!(t.route(ip("10.1.1.4"), true, &Close { bytes_sent: 0, ..clean }), Route::Drop);
        assert_eq!(t.route(ip("192.0.2.1"), true, &clean), Route::Drop);
        let s = t.sum("10.0.0.0/8");
        assert_eq!((s.connections, s.bytes_sent, s.iw_segments_sent, s.lossy), (2, 30_000, 20, 2));
        assert_eq!(
            (s.data_segs_out, s.total_retrans, s.rtt_us_sum, s.rtt_n, s.last_min_rtt_us),
            (22, 4, 20_000, 1, 20_000)
        );
        let mut out = vec![];
        assert_eq!(t.write(&mut out).unwrap(), 1);
        let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            (j["kind"].as_str(), j["prefix"].as_str(), j["connections"].as_u64()),
            (Some("summary"), Some("10.0.0.0/8"), Some(2))
        );
        assert_eq!(t.write(&mut vec![]).unwrap(), 0); // reset after writing
    }

    #[test]
    fn a_bad_prefix_item_is_a_usage_error_naming_it() {
        for bad in ["10.0.0.0/8", "10.0.0.0/8=avg", "10.0.0.0/33=sum", "x/8=sum", "10.0.0.0=sum"] {
            match Table::parse(&[bad.to_string()]) {
                Err(Error::Usage(m)) => assert!(m.contains(bad), "{m}"),
                _ => panic!("{bad} accepted"),
            }
        }
    }
}
