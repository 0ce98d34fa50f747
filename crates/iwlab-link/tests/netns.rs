//! The relay between two network namespaces, on real Linux TCP/IP: needs root, `/dev/net/tun`
//! and `ip netns`; prints why and passes when one is missing.
//!
//! ```text
//!  iwlk-test-<pid>-cli        iwlk-test-<pid>-rtr                     iwlk-test-<pid>-srv
//!  cr 198.18.1.1 ── veth ── rc 198.18.1.254   rs 198.18.2.254 ── veth ── sr 198.18.2.1
//!                            iif rc → table 101: default dev tcs ─┐
//!                            iif rs → table 102: default dev tsc ─┤ iwlab-link (25 ms, 10 Mb/s)
//!                            written back to tcs/tsc → main table ┘
//! ```
//! Addresses are from 198.18.0.0/15 (RFC 2544 benchmarking); the namespaces have no link to the
//! host, so no packet can leave them. Everything is removed by [`Testbed`]'s `Drop`, also when
//! an assertion fails.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const CLI_ADDR: &str = "198.18.1.1";
const SRV_ADDR: &str = "198.18.2.1";

/// Why this machine cannot run the test, if it cannot.
fn skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    if !iwlab_link::tun::available() {
        return Some("/dev/net/tun cannot be opened".into());
    }
    match Command::new("ip").args(["netns", "list"]).output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("`ip netns list` failed: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => Some(format!("`ip` is not available: {e}")),
    }
}

fn run(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
}

/// Namespaces and the relay process; `Drop` removes them (deleting a namespace removes its
/// veths and TUNs).
struct Testbed {
    prefix: String,
    namespaces: Vec<String>,
    relay: Option<Child>,
    stats: std::path::PathBuf,
}

impl Testbed {
    fn ns(&self, role: &str) -> String {
        format!("{}{role}", self.prefix)
    }
    fn add_ns(&mut self, role: &str) -> String {
        let name = self.ns(role);
        run(&["ip", "netns", "add", &name]);
        self.namespaces.push(name.clone());
        name
    }
    /// Prints what the namespaces look like (on failure, before they are removed).
    fn dump_state(&self) {
        for ns in &self.namespaces {
            for cmd in
                [&["-s", "link"][..], &["addr"], &["route"], &["rule"], &["route", "show", "table", "all"], &["neigh"]]
            {
                if let Ok(o) = Command::new("ip").arg("-n").arg(ns).args(cmd).output() {
                    eprintln!("--- ip -n {ns} {}\n{}", cmd.join(" "), String::from_utf8_lossy(&o.stdout));
                }
            }
            if let Ok(o) = Command::new("ip").args(["netns", "exec", ns, "nstat", "-az"]).output() {
                let text = String::from_utf8_lossy(&o.stdout);
                let nonzero: Vec<&str> =
                    text.lines().filter(|l| !l.split_whitespace().nth(1).is_some_and(|v| v == "0")).collect();
                eprintln!("--- nstat {ns}\n{}", nonzero.join("\n"));
            }
        }
    }

    fn stop_relay(&mut self) -> Option<std::process::ExitStatus> {
        let mut child = self.relay.take()?;
        // SAFETY: signalling our own child by pid.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        child.wait().ok()
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.dump_state();
        }
        self.stop_relay();
        for ns in self.namespaces.drain(..).rev() {
            let _ = Command::new("ip").args(["netns", "del", &ns]).status();
        }
        let _ = std::fs::remove_file(&self.stats);
    }
}

/// Runs `f` on a thread that has entered namespace `ns` (sockets it opens live there).
fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    let path = format!("/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        // SAFETY: setns on a namespace fd; affects this thread only.
        let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns {path}: {}", io::Error::last_os_error());
        f()
    })
}

/// Builds client, router and server namespaces with policy routing into two TUNs.
fn build(tb: &mut Testbed) {
    let cli = tb.add_ns("cli");
    let rtr = tb.add_ns("rtr");
    let srv = tb.add_ns("srv");
    // Before any device exists in the router, so that every device inherits these.
    for (key, value) in [
        ("net.ipv4.ip_forward", "1"),
        ("net.ipv4.conf.all.rp_filter", "0"),
        ("net.ipv4.conf.default.rp_filter", "0"),
        ("net.ipv6.conf.all.disable_ipv6", "1"),
        ("net.ipv6.conf.default.disable_ipv6", "1"),
    ] {
        // /proc/sys/net shows the namespace of the process that opens it.
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        run(&["ip", "netns", "exec", &rtr, "sh", "-c", &format!("echo {value} > {path}")]);
    }
    run(&["ip", "-n", &cli, "link", "add", "cr", "type", "veth", "peer", "name", "rc", "netns", &rtr]);
    run(&["ip", "-n", &srv, "link", "add", "sr", "type", "veth", "peer", "name", "rs", "netns", &rtr]);
    for (ns, dev, addr) in [
        (&cli, "cr", "198.18.1.1/24"),
        (&rtr, "rc", "198.18.1.254/24"),
        (&rtr, "rs", "198.18.2.254/24"),
        (&srv, "sr", "198.18.2.1/24"),
    ] {
        run(&["ip", "-n", ns, "addr", "add", addr, "dev", dev]);
        run(&["ip", "-n", ns, "link", "set", dev, "up"]);
    }
    for ns in [&cli, &rtr, &srv] {
        run(&["ip", "-n", ns, "link", "set", "lo", "up"]);
    }
    run(&["ip", "-n", &cli, "route", "add", "default", "via", "198.18.1.254"]);
    run(&["ip", "-n", &srv, "route", "add", "default", "via", "198.18.2.254"]);
    // One TUN per direction; forwarded packets are steered in by their input interface.
    for (tun, iif, table) in [("tcs", "rc", "101"), ("tsc", "rs", "102")] {
        run(&["ip", "-n", &rtr, "tuntap", "add", "dev", tun, "mode", "tun"]);
        run(&["ip", "-n", &rtr, "link", "set", tun, "up"]);
        run(&["ip", "-n", &rtr, "route", "add", "default", "dev", tun, "table", table]);
        run(&["ip", "-n", &rtr, "rule", "add", "iif", iif, "lookup", table, "pref", table]);
    }
}

/// Starts the relay in the router namespace and waits until it says it is ready.
fn start_relay(tb: &mut Testbed, extra: &[&str]) {
    let rtr = tb.ns("rtr");
    let stats = tb.stats.to_str().unwrap().to_owned();
    let mut args = vec!["netns", "exec", &rtr, env!("CARGO_BIN_EXE_iwlab-link"), "--tun", "tcs", "--tun", "tsc"];
    args.extend_from_slice(&["--stats-json", &stats]);
    args.extend_from_slice(extra);
    let mut child = Command::new("ip").args(&args).stderr(Stdio::piped()).spawn().expect("spawn the relay");
    let stderr = child.stderr.take().unwrap();
    tb.relay = Some(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[relay] {line}");
            let _ = tx.send(line);
        }
    });
    loop {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(line) if line.contains("ready") => return,
            Ok(_) => {}
            Err(e) => panic!("the relay did not become ready: {e}"),
        }
    }
}

fn checksum(b: &[u8]) -> u16 {
    let mut sum: u32 = b.chunks(2).map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// `ping -c 5` done here (iputils is not installed everywhere): five ICMP echo requests, 200 ms
/// apart, over a raw socket; returns each round-trip time.
fn ping5(dst: &'static str) -> Vec<Duration> {
    // SAFETY: plain syscalls on a socket this function owns and closes.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP);
        assert!(fd >= 0, "raw socket: {}", io::Error::last_os_error());
        let tv = libc::timeval { tv_sec: 2, tv_usec: 0 };
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVTIMEO, (&tv as *const libc::timeval).cast(), 16);
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(dst.parse::<std::net::Ipv4Addr>().unwrap().octets()) },
            sin_zero: [0; 8],
        };
        let id = (std::process::id() & 0xffff) as u16;
        let mut rtts = vec![];
        for seq in 1..=5u16 {
            let mut req = vec![8u8, 0, 0, 0];
            req.extend_from_slice(&id.to_be_bytes());
            req.extend_from_slice(&seq.to_be_bytes());
            req.resize(64, 0x5a); // 56 bytes of data, as ping sends
            let c = checksum(&req);
            req[2..4].copy_from_slice(&c.to_be_bytes());
            let t0 = Instant::now();
            let n = libc::sendto(
                fd,
                req.as_ptr().cast(),
                req.len(),
                0,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as u32,
            );
            assert_eq!(n, 64, "sendto: {}", io::Error::last_os_error());
            loop {
                let mut buf = [0u8; 1500];
                let n = libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0);
                assert!(n > 0, "no echo reply for seq {seq}: {}", io::Error::last_os_error());
                let ihl = (buf[0] & 0xf) as usize * 4;
                let icmp = &buf[ihl..n as usize];
                if icmp[0] == 0 && icmp[4..6] == id.to_be_bytes() && icmp[6..8] == seq.to_be_bytes() {
                    rtts.push(t0.elapsed());
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        libc::close(fd);
        rtts
    }
}

/// Sends `bytes` from the client to the server; returns the time from `connect` until the
/// server, having read everything, closed (so the last byte has crossed the link).
fn tcp_transfer(tb: &Testbed, bytes: usize) -> Duration {
    let (ready_tx, ready_rx) = mpsc::channel();
    let server = in_netns(&tb.ns("srv"), move || {
        let listener = TcpListener::bind((SRV_ADDR, 5001)).expect("bind");
        listener.set_nonblocking(true).unwrap();
        ready_tx.send(()).unwrap();
        let t0 = Instant::now();
        let (mut conn, peer) = loop {
            match listener.accept() {
                Ok(c) => break c,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && t0.elapsed() < Duration::from_secs(20) => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Err(e) => panic!("accept: {e}"),
            }
        };
        conn.set_nonblocking(false).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut got = 0;
        let mut buf = vec![0u8; 65536];
        loop {
            match conn.read(&mut buf).expect("server read") {
                0 => break,
                n => got += n,
            }
        }
        (got, peer.ip().to_string())
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).expect("server ready");
    let client = in_netns(&tb.ns("cli"), move || {
        let data = vec![0x42u8; bytes];
        let t0 = Instant::now();
        let mut conn = TcpStream::connect((SRV_ADDR, 5001)).expect("connect");
        conn.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        conn.write_all(&data).expect("client write");
        conn.shutdown(Shutdown::Write).unwrap();
        let mut rest = vec![];
        conn.read_to_end(&mut rest).expect("client read");
        t0.elapsed()
    });
    let took = client.join().expect("client thread");
    let (got, peer) = server.join().expect("server thread");
    assert_eq!(got, bytes, "the server got every byte");
    assert_eq!(peer, CLI_ADDR, "routed, not translated");
    took
}

#[test]
fn relay_between_namespaces_delays_by_25_ms_each_way_and_limits_tcp_to_10_mbps() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED relay_between_namespaces…: {why}");
        return;
    }
    let prefix = format!("iwlk-test-{}-", std::process::id());
    let mut tb = Testbed {
        prefix: prefix.clone(),
        namespaces: vec![],
        relay: None,
        stats: std::env::temp_dir().join(format!("{prefix}stats.json")),
    };
    build(&mut tb);
    start_relay(&mut tb, &["--rate", "10Mbps", "--delay", "25ms", "--queue", "droptail:100pkt"]);

    let rtts = in_netns(&tb.ns("cli"), || ping5(SRV_ADDR)).join().expect("ping");
    eprintln!("ping {SRV_ADDR}: {rtts:?}");
    assert_eq!(rtts.len(), 5);
    for rtt in &rtts {
        assert!(*rtt >= Duration::from_millis(50) && *rtt < Duration::from_millis(60), "rtt {rtt:?}");
    }

    // 1 MiB at 10 Mb/s is 0.84 s of payload alone.
    let took = tcp_transfer(&tb, 1 << 20);
    eprintln!("1 MiB over TCP: {took:?}");
    assert!(took >= Duration::from_millis(800), "{took:?}: not rate-limited");
    assert!(took < Duration::from_secs(10), "{took:?}: far slower than 10 Mb/s");

    let status = tb.stop_relay().expect("relay was running");
    assert!(status.success(), "relay exit status {status}");
    let text = std::fs::read_to_string(&tb.stats).expect("stats JSON written at exit");
    eprintln!("{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let up = &json["directions"][0];
    assert_eq!(up["tun"], "tcs");
    assert!(up["bytes_out"].as_u64().unwrap() > 1 << 20, "the data crossed the client→server link");
    assert!(json["directions"][1]["packets_out"].as_u64().unwrap() > 5, "ACKs and echo replies came back");
    for k in ["p50", "p90", "p99", "max"] {
        assert!(up["lateness_us"][k].as_f64().is_some(), "lateness {k}");
    }

    drop(tb);
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let left = String::from_utf8_lossy(&left.stdout);
    assert!(!left.contains(&prefix), "namespaces left behind: {left}");
}
