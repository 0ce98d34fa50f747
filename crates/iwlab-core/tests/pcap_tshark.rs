//! A hand-made connection written as pcap and read back by tshark, when tshark is installed:
//! the handshake, relative sequence numbers (across a 32-bit wrap), the SACK block and the
//! retransmission must decode as a capture of a real stack would, with no checksum or
//! malformed-packet warnings. Without tshark the check is skipped (and says so).

use std::process::Command;

use iwlab_core::engine::SimTime;
use iwlab_core::net::packet::{Ecn, FlowId, Packet, Payload};
use iwlab_core::tcp::segment::{Flags, SackBlocks, Segment};
use iwlab_core::trace::pcap::{flow_isn, PcapWriter, Side};

const CLIENT: u32 = 0;
const SERVER: u32 = 5;

fn tcp(uid: u64, flow: FlowId, to_server: bool, seg: Segment) -> Packet {
    let (src, dst) = if to_server { (CLIENT, SERVER) } else { (SERVER, CLIENT) };
    Packet {
        uid,
        src,
        dst,
        flow,
        size: seg.wire_len(),
        ecn: Ecn::NotEct,
        created: SimTime::ZERO,
        payload: Payload::Tcp { seg, to_server },
    }
}

fn ms(t: u64) -> SimTime {
    SimTime::from_nanos(t * 1_000_000)
}

/// A connection whose client ISN lies within 2000 of 2^32, so the data crosses the wrap.
fn wrapping_flow() -> FlowId {
    (0..).find(|&f| flow_isn(f, Side::Client) >= u32::MAX - 1999).unwrap()
}

/// SYN, SYN-ACK, ACK, two data segments, a dup ACK with SACK, an RTO retransmission of the
/// first segment, its ACK, FIN/ACK both ways, the last ACK, and one UDP datagram.
fn packets(flow: FlowId) -> Vec<(SimTime, Packet)> {
    let syn_opts =
        |ts| Segment { wnd: 65_535, mss: Some(1460), sack_permitted: true, ts: Some(ts), ..Default::default() };
    let seg =
        |seq, ack, len, flags, ts| Segment { seq, ack, len, flags, wnd: 65_535, ts: Some(ts), ..Default::default() };
    let mut sack = SackBlocks::default();
    sack.push(1001, 2001);
    let a = Flags::ACK;
    let pa = Flags::PSH | Flags::ACK;
    let fa = Flags::FIN | Flags::ACK;
    let mut uid = 0;
    let mut next = |t, to_server, s| {
        uid += 1;
        (ms(t), tcp(uid, flow, to_server, s))
    };
    let mut v = vec![
        next(0, true, Segment { flags: Flags::SYN, ..syn_opts((1000, 0)) }),
        next(10, false, Segment { ack: 1, flags: Flags::SYN | a, ..syn_opts((5000, 1000)) }),
        next(20, true, seg(1, 1, 0, a, (1020, 5000))),
        next(20, true, seg(1, 1, 1000, pa, (1020, 5000))),
        next(21, true, seg(1001, 1, 1000, pa, (1021, 5000))),
        next(31, false, Segment { sack, ..seg(1, 1, 0, a, (5021, 1021)) }),
        next(250, true, Segment { retransmit: true, ..seg(1, 1, 1000, pa, (1250, 5021)) }),
        next(260, false, seg(1, 2001, 0, a, (5250, 1250))),
        next(261, true, seg(2001, 1, 0, fa, (1261, 5250))),
        next(271, false, seg(1, 2002, 0, fa, (5271, 1261))),
        next(281, true, seg(2002, 2, 0, a, (1281, 5271))),
    ];
    v.push((
        ms(290),
        Packet {
            uid: 100,
            src: 2,
            dst: SERVER,
            flow: flow + 1,
            size: 28 + 200,
            ecn: Ecn::Ect0,
            created: SimTime::ZERO,
            payload: Payload::Udp { len: 200, seq: 0 },
        },
    ));
    v
}

#[test]
fn tshark_decodes_a_hand_made_connection() {
    let flow = wrapping_flow();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iwlab_pcap_tshark.pcap");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut w = PcapWriter::new(file).unwrap();
    for (t, p) in packets(flow) {
        w.write_packet(t, &p).unwrap();
    }
    w.into_inner().unwrap();

    let fields = [
        "frame.number",
        "ip.proto",
        "tcp.flags.str",
        "tcp.seq",
        "tcp.ack",
        "tcp.seq_raw",
        "tcp.len",
        "tcp.options.sack_le",
        "tcp.options.sack_re",
        "tcp.analysis.retransmission",
        "udp.length",
        "ip.checksum.status",
        "tcp.checksum.status",
        "udp.checksum.status",
        "_ws.expert.message",
        "_ws.expert.severity",
    ];
    let mut cmd = Command::new("tshark");
    cmd.arg("-n").arg("-r").arg(&path).args(["-T", "fields", "-E", "aggregator=|"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    for pref in [
        "tcp.relative_sequence_numbers:TRUE",
        "tcp.analyze_sequence_numbers:TRUE",
        "tcp.check_checksum:TRUE",
        "ip.check_checksum:TRUE",
        "udp.check_checksum:TRUE",
    ] {
        cmd.args(["-o", pref]);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("tshark not found on PATH: pcap decode check skipped");
            return;
        }
        Err(e) => panic!("running tshark: {e}"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    println!("{stdout}");

    let rows: Vec<Vec<&str>> = stdout.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 12, "one line per frame");
    for r in &rows {
        assert_eq!(r.len(), fields.len(), "{r:?}");
    }
    let col = |name: &str| fields.iter().position(|f| *f == name).unwrap();
    let get = |frame: usize, name: &str| rows[frame - 1][col(name)];

    // Flags as Wireshark renders them, e.g. "··········S·": compare the letters only.
    let letters = |frame| get(frame, "tcp.flags.str").chars().filter(|c| c.is_ascii_alphabetic()).collect::<String>();
    let expect = [
        // frame, flags, rel seq, rel ack, len
        (1, "S", "0", "0", "0"),
        (2, "AS", "0", "1", "0"),
        (3, "A", "1", "1", "0"),
        (4, "AP", "1", "1", "1000"),
        (5, "AP", "1001", "1", "1000"),
        (6, "A", "1", "1", "0"),
        (7, "AP", "1", "1", "1000"),
        (8, "A", "1", "2001", "0"),
        (9, "AF", "2001", "1", "0"),
        (10, "AF", "1", "2002", "0"),
        (11, "A", "2002", "2", "0"),
    ];
    for (frame, flags, seq, ack, len) in expect {
        assert_eq!(letters(frame), flags, "flags of frame {frame}");
        assert_eq!(get(frame, "tcp.seq"), seq, "relative seq of frame {frame}");
        assert_eq!(get(frame, "tcp.ack"), ack, "relative ack of frame {frame}");
        assert_eq!(get(frame, "tcp.len"), len, "payload of frame {frame}");
    }

    // The client's data crosses 2^32 on the wire while relative numbers run on.
    let raw = |frame| get(frame, "tcp.seq_raw").parse::<u64>().unwrap();
    assert_eq!(raw(4) + 1000, raw(5) + (1 << 32), "raw seq of frames 4 and 5");

    // The dup ACK's SACK block, in the client's relative sequence space.
    assert_eq!(get(6, "tcp.options.sack_le"), "1001");
    assert_eq!(get(6, "tcp.options.sack_re"), "2001");
    assert!(get(6, "_ws.expert.message").contains("Duplicate ACK"), "{:?}", rows[5]);

    // Only the resent segment is a retransmission.
    for frame in 1..=11 {
        let flagged = !get(frame, "tcp.analysis.retransmission").is_empty();
        assert_eq!(flagged, frame == 7, "retransmission mark on frame {frame}: {:?}", rows[frame - 1]);
    }
    assert!(get(7, "_ws.expert.message").contains("retransmission"));

    // The UDP datagram.
    assert_eq!(get(12, "ip.proto"), "17");
    assert_eq!(get(12, "udp.length"), "208");

    // Every checksum verified (status 1 = good) and no malformed, checksum or other
    // warning/error-level expert info anywhere (severity 0x00600000 warning, 0x00800000
    // error; the retransmission is a note).
    for frame in 1..=12 {
        assert_eq!(get(frame, "ip.checksum.status"), "1", "IP checksum of frame {frame}");
        let l4 = if frame == 12 { "udp.checksum.status" } else { "tcp.checksum.status" };
        assert_eq!(get(frame, l4), "1", "{l4} of frame {frame}");
    }
    for (i, r) in rows.iter().enumerate() {
        let msg = r[col("_ws.expert.message")].to_ascii_lowercase();
        assert!(!msg.contains("checksum") && !msg.contains("malformed"), "frame {}: {msg}", i + 1);
        for sev in r[col("_ws.expert.severity")].split('|').filter(|s| !s.is_empty()) {
            let sev: u32 = sev.parse().unwrap();
            assert!(sev < 0x0060_0000, "frame {}: severity {sev:#x} in {r:?}", i + 1);
        }
    }
}
