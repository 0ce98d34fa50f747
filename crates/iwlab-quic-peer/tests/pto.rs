//! The peer's `pto` (RFC 9002 §6.2) on loopback, through a relay that withholds datagrams: a
//! client whose Initial is lost probes it after one PTO, and a server whose ACKs are withheld
//! probes its response; both ends report a number, never null.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

const PEER: &str = env!("CARGO_BIN_EXE_iwlab-quic-peer");

/// What the relay has forwarded so far.
#[derive(Default)]
struct Seen {
    up: u64,
    down: u64,
    /// When the server's tenth datagram went down (the handshake is over, the response is flowing).
    tenth_down: Option<Instant>,
}

#[derive(Copy, Clone, PartialEq)]
enum Dir {
    Up,
    Down,
}

/// A UDP relay between one client and the server that drops what `drop` says.
struct Relay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Relay {
    fn new(server: SocketAddr, drop: fn(&Seen, Dir) -> bool) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(server).unwrap();
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        }
        let addr = front.local_addr().unwrap();
        let (front, back) = (Arc::new(front), Arc::new(back));
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
        let seen: Arc<Mutex<Seen>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for dir in [Dir::Up, Dir::Down] {
            let (front, back, client, seen, stop) =
                (front.clone(), back.clone(), client.clone(), seen.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                let mut buf = [0u8; 65_536];
                while !stop.load(Ordering::Relaxed) {
                    let (n, from) = match dir {
                        Dir::Up => match front.recv_from(&mut buf) {
                            Ok(r) => r,
                            Err(_) => continue,
                        },
                        Dir::Down => match back.recv(&mut buf) {
                            Ok(n) => (n, back.peer_addr().unwrap()),
                            Err(_) => continue,
                        },
                    };
                    let mut s = seen.lock().unwrap();
                    let dropped = drop(&s, dir);
                    match dir {
                        Dir::Up => {
                            s.up += 1;
                            *client.lock().unwrap() = Some(from);
                            if !dropped {
                                let _ = back.send(&buf[..n]);
                            }
                        }
                        Dir::Down => {
                            s.down += 1;
                            if s.down == 10 {
                                s.tenth_down = Some(Instant::now());
                            }
                            if let (false, Some(c)) = (dropped, *client.lock().unwrap()) {
                                let _ = front.send_to(&buf[..n], c);
                            }
                        }
                    }
                }
            }));
        }
        Relay { addr, stop, threads }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.threads.drain(..).for_each(|t| t.join().unwrap());
    }
}

/// A peer process, killed when dropped (also when the test fails).
struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(args: &[&str]) -> (Peer, BufReader<std::process::ChildStdout>) {
    let mut c = Command::new(PEER)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    (Peer(c), out)
}

/// One exchange of a 200 kB response through a relay dropping what `drop` says: the client's
/// and the server's records.
fn exchange(log: &Path, drop: fn(&Seen, Dir) -> bool) -> (Value, Value) {
    let port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let (_server, _server_out) = spawn(&["server", "--listen", &listen, "--chain", "1000", "--log", log.to_str().unwrap()]);
    let relay = Relay::new(listen.parse().unwrap(), drop);
    let (mut client, mut out) = spawn(&["client"]);
    let job = serde_json::json!({"uid": "f1", "flow": 1, "bind": "127.0.0.1", "dst": "127.0.0.1",
                                 "port": relay.addr.port(), "request": 100, "response": 200_000});
    let mut stdin = client.0.stdin.take().unwrap();
    writeln!(stdin, "{job}").unwrap();
    std::mem::drop(stdin);
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let client_rec: Value = serde_json::from_str(&line).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(l) = std::fs::read_to_string(log).ok().and_then(|t| t.lines().next().map(str::to_string)) {
            return (client_rec, serde_json::from_str(&l).unwrap());
        }
        assert!(Instant::now() < deadline, "no server record");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pto(rec: &Value) -> u64 {
    rec["pto"].as_u64().unwrap_or_else(|| panic!("pto is a count: {rec}"))
}

#[test]
fn a_lost_initial_is_probed_by_the_client() {
    let dir = tempdir();
    // RFC 9002 §6.2.2: the Initial's PTO is 3 × the initial RTT (333 ms) = 999 ms.
    let (client, server) = exchange(&dir.join("server.jsonl"), |s, d| d == Dir::Up && s.up == 0);
    assert_eq!(client["completed"], true, "{client}");
    assert!(pto(&client) >= 1, "{client}");
    assert!(server.get("error").is_none(), "{server}");
    pto(&server);
}

#[test]
fn acks_withheld_make_the_server_probe_its_response() {
    let dir = tempdir();
    // Every client datagram for 600 ms once the response is flowing: the server's PTO
    // (loopback srtt + 25 ms max_ack_delay, doubling) fires several times.
    let (client, server) = exchange(&dir.join("server.jsonl"), |s, d| {
        d == Dir::Up && s.tenth_down.is_some_and(|t| t.elapsed() < Duration::from_millis(600))
    });
    assert_eq!(client["completed"], true, "{client}");
    assert!(pto(&server) >= 1, "{server}");
    pto(&client);
}

/// A folder of the test's own, removed when dropped.
struct TempDir(std::path::PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir() -> TempDir {
    let d = std::env::temp_dir().join(format!("iwlab-pto-{}-{:?}", std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TempDir(d)
}
