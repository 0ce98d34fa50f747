//! The event loop: one thread, one `mio` poll over the packet fds (TUN devices, or any datagram
//! fd in tests), a `timerfd` for nanosecond wake-ups and a wake pipe for signals.
//!
//! Why `mio` and not `tokio`: the loop is one thread doing non-blocking reads and writes on a
//! handful of fds; an async runtime adds tasks, wakers and a 1 ms-granularity timer wheel and
//! gives nothing back. `mio`'s own poll timeout is rounded up to whole milliseconds
//! (`epoll_wait`), so sleeps go through a `timerfd` armed at an absolute `CLOCK_MONOTONIC`
//! instant (hrtimer precision), `spin` before the next event; the last `spin` is covered by
//! polling with a zero timeout, which keeps reading arrivals while waiting. Timer slack is set to
//! 1 ns (`PR_SET_TIMERSLACK`).
//!
//! Each iteration: run every link up to `now` and write out the packets that are due; read
//! arrivals (at most `BURST` per fd before timers are looked at again), each stamped with the
//! clock when it was read; sleep until the next event.

use crate::clock::MonoClock;
use crate::link::{Link, LinkParams};
use crate::pool::Pool;
use crate::stats::{DirectionReport, Histogram, LatenessUs, Report};
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::net::queue::{Limit, QueueConfig};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Packets read from one fd before the timers get another look.
const BURST: usize = 32;
const TIMER: Token = Token(usize::MAX - 1);
const WAKE: Token = Token(usize::MAX - 2);

/// One direction: packets read from `fd` go through a link with `params` and are written back
/// to the same `fd`.
pub struct DirectionSpec {
    pub name: String,
    pub fd: OwnedFd,
    pub params: LinkParams,
}

/// Settings of the relay as a whole.
#[derive(Clone, Debug)]
pub struct RelayConfig {
    pub seed: u64,
    pub pool_slots: usize,
    /// Bytes per buffer: must exceed the largest packet (the MTU of every TUN).
    pub slot_bytes: usize,
    /// Sleep until this long before the next event, then poll without sleeping.
    pub spin: SimDuration,
    pub stats_json: Option<PathBuf>,
    /// Stop by itself after this long.
    pub duration: Option<SimDuration>,
}

/// Asks a running relay to stop or to write its report; the relay polls the read end of `wake`.
#[derive(Clone)]
pub struct Control {
    pub stop: Arc<AtomicBool>,
    pub dump: Arc<AtomicBool>,
    wake_tx: Arc<UnixStream>,
}

impl Control {
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = (&*self.wake_tx).write(&[1]);
    }
    pub fn dump(&self) {
        self.dump.store(true, Ordering::SeqCst);
        let _ = (&*self.wake_tx).write(&[2]);
    }
    /// SIGINT/SIGTERM stop the relay, SIGUSR1 writes the report and goes on: each sets its flag,
    /// then writes to the wake pipe (signal-hook runs the actions in registration order).
    pub fn install_signal_handlers(&self) -> io::Result<()> {
        use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
        for sig in [SIGINT, SIGTERM] {
            signal_hook::flag::register(sig, self.stop.clone())?;
            signal_hook::low_level::pipe::register(sig, self.wake_tx.try_clone()?)?;
        }
        signal_hook::flag::register(SIGUSR1, self.dump.clone())?;
        signal_hook::low_level::pipe::register(SIGUSR1, self.wake_tx.try_clone()?)?;
        Ok(())
    }
}

struct Dir {
    name: String,
    queue_desc: String,
    fd: OwnedFd,
    link: Link,
    lateness: Histogram,
    pool_drops: u64,
    write_errors: u64,
    /// Edge-triggered poll: more may be waiting after a burst.
    readable: bool,
    closed: bool,
}

pub struct Relay {
    clock: MonoClock,
    cfg: RelayConfig,
    poll: Poll,
    events: Events,
    timer: OwnedFd,
    armed: Option<SimTime>,
    wake_rx: UnixStream,
    control: Control,
    dirs: Vec<Dir>,
    pool: Pool,
    /// Where a packet goes when the pool is exhausted (read and dropped).
    scratch: Box<[u8]>,
}

fn cvt(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

/// A human-readable summary of a queue config (for the report).
pub fn describe_queue(q: &QueueConfig) -> String {
    let lim = |l: &Limit| match l {
        Limit::Packets(n) => format!("{n}pkt"),
        Limit::Bytes(b) => format!("{b}B"),
    };
    match q {
        QueueConfig::DropTail { limit } => format!("droptail:{}", lim(limit)),
        QueueConfig::Red(c) => format!(
            "red:limit={},min={},max={},maxp={},wq={},gentle={},mean={},bytes={},ecn={}",
            lim(&c.limit),
            c.min_th,
            c.max_th,
            c.max_p,
            c.w_q,
            c.gentle as u8,
            c.mean_pkt_size,
            c.byte_mode as u8,
            c.ecn as u8
        ),
        QueueConfig::Codel(c) => format!(
            "codel:limit={},target={}us,interval={}us,mtu={},ecn={}",
            lim(&c.limit),
            c.target.as_nanos() / 1000,
            c.interval.as_nanos() / 1000,
            c.mtu,
            c.ecn as u8
        ),
    }
}

impl Relay {
    pub fn new(dirs: Vec<DirectionSpec>, cfg: RelayConfig) -> io::Result<Relay> {
        assert!(!dirs.is_empty(), "at least one direction");
        // Timer slack 1 ns: wake-ups as close to the requested instant as the kernel can.
        // SAFETY: plain prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        let poll = Poll::new()?;
        // SAFETY: plain syscall; the fd is owned right away.
        let timer = cvt(
            unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) },
            "timerfd_create",
        )?;
        let timer = unsafe { OwnedFd::from_raw_fd(timer) };
        poll.registry().register(&mut SourceFd(&timer.as_raw_fd()), TIMER, Interest::READABLE)?;
        let (wake_rx, wake_tx) = UnixStream::pair()?;
        wake_rx.set_nonblocking(true)?;
        wake_tx.set_nonblocking(true)?;
        poll.registry().register(&mut SourceFd(&wake_rx.as_raw_fd()), WAKE, Interest::READABLE)?;
        let control = Control {
            stop: Arc::new(AtomicBool::new(false)),
            dump: Arc::new(AtomicBool::new(false)),
            wake_tx: Arc::new(wake_tx),
        };
        let mut out = Vec::with_capacity(dirs.len());
        for (i, d) in dirs.into_iter().enumerate() {
            set_nonblocking(d.fd.as_raw_fd())?;
            poll.registry().register(&mut SourceFd(&d.fd.as_raw_fd()), Token(i), Interest::READABLE)?;
            out.push(Dir {
                queue_desc: describe_queue(&d.params.queue),
                link: Link::new(d.params, cfg.seed, i as u64, cfg.pool_slots),
                name: d.name,
                fd: d.fd,
                lateness: Histogram::default(),
                pool_drops: 0,
                write_errors: 0,
                // Packets may already be waiting: read once before the first poll.
                readable: true,
                closed: false,
            });
        }
        Ok(Relay {
            clock: MonoClock::start(),
            pool: Pool::new(cfg.pool_slots, cfg.slot_bytes),
            scratch: vec![0u8; cfg.slot_bytes].into_boxed_slice(),
            cfg,
            poll,
            events: Events::with_capacity(64),
            timer,
            armed: None,
            wake_rx,
            control,
            dirs: out,
        })
    }

    pub fn control(&self) -> Control {
        self.control.clone()
    }

    /// Runs until stopped (control, signal, `duration`, or every fd closed), then returns the
    /// final report (also written to `stats_json`).
    pub fn run(&mut self) -> io::Result<Report> {
        let deadline = self.cfg.duration.map(|d| SimTime::ZERO + d);
        loop {
            let now = self.clock.now();
            self.release_due(now);
            if self.control.stop.load(Ordering::SeqCst)
                || deadline.is_some_and(|d| now >= d)
                || self.dirs.iter().all(|d| d.closed)
            {
                break;
            }
            if self.control.dump.swap(false, Ordering::SeqCst) {
                self.write_report()?;
            }
            let mut more = false;
            for i in 0..self.dirs.len() {
                if self.dirs[i].readable && !self.dirs[i].closed {
                    more |= self.read_burst(i)?;
                }
            }
            let now = self.clock.now();
            self.release_due(now);
            let next = self.dirs.iter().filter_map(|d| d.link.next_event()).chain(deadline).min();
            let timeout = match next {
                _ if more => Some(Duration::ZERO),
                None => None,
                Some(t) if t.as_nanos() <= now.as_nanos() + self.cfg.spin.as_nanos() => Some(Duration::ZERO),
                Some(t) => {
                    self.arm(SimTime::from_nanos(t.as_nanos() - self.cfg.spin.as_nanos()))?;
                    None
                }
            };
            match self.poll.poll(&mut self.events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in self.events.iter() {
                match ev.token() {
                    TIMER => {
                        let mut buf = [0u8; 8];
                        // SAFETY: reading 8 bytes into an 8-byte buffer.
                        unsafe { libc::read(self.timer.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
                        self.armed = None;
                    }
                    WAKE => {
                        let mut buf = [0u8; 64];
                        while matches!((&self.wake_rx).read(&mut buf), Ok(n) if n > 0) {}
                    }
                    Token(i) => self.dirs[i].readable = true,
                }
            }
        }
        let report = self.report();
        if let Some(p) = &self.cfg.stats_json {
            report.write(p)?;
        }
        for d in &mut self.dirs {
            d.link.drain(&mut self.pool);
        }
        Ok(report)
    }

    /// Arms the timerfd for absolute instant `t` unless it already is.
    fn arm(&mut self, t: SimTime) -> io::Result<()> {
        if self.armed == Some(t) {
            return Ok(());
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            // An all-zero it_value would disarm: never ask for the instant 0 itself.
            it_value: self.clock.to_timespec(t.max(SimTime::from_nanos(1))),
        };
        // SAFETY: valid itimerspec; old value not requested.
        cvt(
            unsafe {
                libc::timerfd_settime(self.timer.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
            },
            "timerfd_settime",
        )?;
        self.armed = Some(t);
        Ok(())
    }

    /// Runs every link to `now` and writes out what is due.
    fn release_due(&mut self, now: SimTime) {
        for d in &mut self.dirs {
            d.link.advance(now, &mut self.pool);
            while let Some((slot, due)) = d.link.pop_due(now) {
                let start = self.clock.now();
                d.lateness.record(start.saturating_since(due).as_nanos());
                let pkt = self.pool.packet(slot);
                // SAFETY: writing `pkt.len()` bytes from a live slice.
                let r = unsafe { libc::write(d.fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) };
                if r == pkt.len() as isize {
                    d.link.count_out(pkt.len());
                } else {
                    d.write_errors += 1;
                }
                self.pool.release(slot);
            }
        }
    }

    /// Reads up to `BURST` packets from direction `i`; true if it may have more.
    fn read_burst(&mut self, i: usize) -> io::Result<bool> {
        let d = &mut self.dirs[i];
        for _ in 0..BURST {
            let slot = self.pool.alloc();
            let buf: &mut [u8] = match slot {
                Some(s) => self.pool.buf_mut(s),
                None => &mut self.scratch,
            };
            // SAFETY: reading at most `buf.len()` bytes into a live buffer.
            let n = unsafe { libc::read(d.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            let cap = buf.len();
            if n <= 0 {
                if let Some(s) = slot {
                    self.pool.release(s);
                }
                if n == 0 {
                    // End of file: only a socket peer closing (a TUN never returns 0).
                    d.closed = true;
                    d.readable = false;
                    self.poll.registry().deregister(&mut SourceFd(&d.fd.as_raw_fd()))?;
                    return Ok(false);
                }
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => {
                        d.readable = false;
                        return Ok(false);
                    }
                    io::ErrorKind::Interrupted => continue,
                    _ => return Err(io::Error::new(e.kind(), format!("read from {}: {e}", d.name))),
                }
            }
            let n = n as usize;
            let now = self.clock.now();
            let Some(s) = slot else {
                d.pool_drops += 1;
                continue;
            };
            if n >= cap {
                // May have been cut short: a packet must be smaller than a slot.
                d.pool_drops += 1;
                self.pool.release(s);
                continue;
            }
            self.pool.set_len(s, n);
            d.link.advance(now, &mut self.pool);
            d.link.arrive(now, s, &mut self.pool);
        }
        Ok(true)
    }

    pub fn report(&self) -> Report {
        Report {
            elapsed_s: self.clock.now().as_secs_f64(),
            seed: self.cfg.seed,
            pool_slots: self.pool.capacity(),
            slot_bytes: self.pool.slot_size(),
            directions: self
                .dirs
                .iter()
                .map(|d| DirectionReport {
                    tun: d.name.clone(),
                    rate_bps: d.link.params().rate_bps,
                    delay_us: d.link.params().delay.as_nanos() as f64 / 1e3,
                    queue: d.queue_desc.clone(),
                    loss: d.link.params().loss,
                    counters: d.link.counters.clone(),
                    pool_drops: d.pool_drops,
                    write_errors: d.write_errors,
                    held: d.link.held() as u64,
                    lateness_us: LatenessUs::from(&d.lateness),
                })
                .collect(),
        }
    }

    fn write_report(&self) -> io::Result<()> {
        match &self.cfg.stats_json {
            Some(p) => self.report().write(p),
            None => Ok(()),
        }
    }
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL on an fd we own.
    unsafe {
        let fl = cvt(libc::fcntl(fd, libc::F_GETFL), "fcntl(F_GETFL)")?;
        cvt(libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK), "fcntl(F_SETFL)")?;
    }
    Ok(())
}
