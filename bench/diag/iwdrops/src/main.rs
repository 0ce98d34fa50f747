//! `iwdrops SCENARIO.toml [DATA.csv]`: packets that start transmission on, and are dropped by,
//! the bottleneck port that carries the data (the one with more payload), by kind: SYN-ACK,
//! data, data with FIN, FIN alone, pure ACK, each split by the sender's retransmission flag.
//! With DATA.csv, one line per data segment there: time,TX|DROP,flow,seq,len,retransmit.

use iwlab_core::engine::SimTime;
use iwlab_core::net::packet::{LinkId, Packet};
use iwlab_core::scenario::Scenario;
use iwlab_core::sim::{Observer, PacketEvent};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

type Counts = Arc<Mutex<BTreeMap<(LinkId, String), u64>>>;

struct Kinds {
    port: LinkId,
    counts: Counts,
    log: Option<Arc<Mutex<(LinkId, std::io::BufWriter<std::fs::File>)>>>,
}

fn kind(p: &Packet) -> String {
    let Some(s) = p.tcp() else { return "udp".into() };
    let rtx = if s.retransmit { " (retransmitted)" } else { "" };
    let k = if s.is_syn() {
        "SYN/SYN-ACK"
    } else if s.len > 0 && s.is_fin() {
        "data+FIN"
    } else if s.len > 0 {
        "data"
    } else if s.is_fin() {
        "FIN alone"
    } else {
        "pure ACK"
    };
    format!("{k}{rtx}")
}

impl Observer for Kinds {
    fn on_packet(&mut self, now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet) {
        if port != self.port {
            return;
        }
        let tag = match ev {
            PacketEvent::TxStart => "TX",
            PacketEvent::Drop(_) => "DROP",
            _ => return,
        };
        *self.counts.lock().unwrap().entry((port, format!("{tag:4} {}", kind(pkt)))).or_default() += 1;
        if let (Some(log), Some(seg)) = (&self.log, pkt.tcp()) {
            let mut l = log.lock().unwrap();
            if seg.len > 0 {
                let t = now.as_nanos() as f64 * 1e-9;
                writeln!(l.1, "{t:.9},{tag},{},{},{},{}", pkt.flow, seg.seq, seg.len, seg.retransmit as u8).unwrap();
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: iwdrops SCENARIO.toml [DATA.csv]");
        std::process::exit(2);
    };
    let scenario = Scenario::from_path(&path).unwrap_or_else(|e| {
        eprintln!("iwdrops: {e}");
        std::process::exit(2);
    });
    let mut built = scenario.build(None).expect("scenario builds");
    let ports = [built.bottleneck_forward, built.bottleneck_reverse];
    let counts: Counts = Arc::default();
    // Which direction carries the data is known only afterwards; log both, keep the busier.
    let csv = args.next();
    let mut logs = Vec::new();
    for &port in &ports {
        let log = csv.as_ref().map(|c| {
            let f = std::fs::File::create(format!("{c}.port{port}")).expect("create DATA.csv");
            Arc::new(Mutex::new((port, std::io::BufWriter::new(f))))
        });
        logs.extend(log.clone());
        built.sim.core.add_observer(Box::new(Kinds { port, counts: counts.clone(), log }));
    }
    let sim = built.run();
    let data_port = *ports.iter().max_by_key(|&&p| sim.core.topo.ports[p as usize].counters_at(sim.core.now()).payload_bytes).unwrap();
    println!("data-direction bottleneck port {data_port} (DATA.csv.port{data_port} holds its data segments)");
    for ((port, k), n) in counts.lock().unwrap().iter() {
        if *port == data_port {
            println!("{k:40} {n}");
        }
    }
    for l in &logs {
        l.lock().unwrap().1.flush().unwrap();
    }
}
