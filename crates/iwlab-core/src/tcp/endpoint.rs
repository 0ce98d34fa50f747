//! One TCP endpoint: the connection state machine (RFC 9293) around a sender and a receiver.
//!
//! Clock-free: every call takes `now` and an [`Outbox`] to fill with segments to send and
//! events for the application; `next_timeout()` says when to call `on_timer`. The endpoint
//! never touches an event queue, so it can be driven segment by segment in tests.

use super::config::{SynLossRule, TcpConfig};
use super::iw::{AnyIw, IwContext, IwEvent, IwEventKind, IwPolicy};
use super::receiver::{AckNeed, Receiver};
use super::segment::{Flags, SackBlocks, Segment};
use super::sender::{ts_value, Sender, TxSeg};
use super::timers::TimerClock;
use crate::engine::SimTime;
use crate::net::packet::{Ecn, NodeId};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    /// Both FINs sent and acknowledged; still answers a retransmitted FIN with an ACK.
    TimeWait,
    /// Gave up: the handshake exceeded `syn_retries`.
    Failed,
}

/// What the application learns from its endpoint.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AppEvent {
    Established,
    /// In-order bytes delivered so far (cumulative).
    Delivered {
        total: u64,
    },
    /// Everything the application wrote has been acknowledged.
    AllAcked,
    /// The peer closed its direction.
    PeerClosed,
    /// Both directions closed.
    Closed,
    /// The handshake failed.
    Failed,
}

/// Segments to send and events for the application; reused across calls.
#[derive(Default, Debug)]
pub struct Outbox {
    pub segments: Vec<(Segment, Ecn)>,
    pub events: Vec<AppEvent>,
    /// Scratch: the sender's transmissions before `emit` turns them into segments.
    tx: Vec<TxSeg>,
}

impl Outbox {
    pub fn clear(&mut self) {
        self.segments.clear();
        self.events.clear();
        self.tx.clear();
    }
}

/// Handshake and receiver-side counters, for flow records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// SYN (client) or SYN-ACK (server) retransmissions by timer expiry.
    pub syn_retransmits: u32,
    /// Initial window used, bytes (after the SYN-loss rule).
    pub iw_bytes: u64,
    pub established_at: Option<SimTime>,
    /// Data segments that arrived marked CE.
    pub ce_received: u64,
}

pub struct Endpoint {
    cfg: TcpConfig,
    pub state: State,
    is_client: bool,
    peer: NodeId,
    declared_size: Option<u64>,
    pub sender: Sender,
    pub receiver: Receiver,
    sack_ok: bool,
    ts_ok: bool,
    ecn_ok: bool,
    syn_sent_at: SimTime,
    /// A SYN or SYN-ACK went out more than once: Karn's rule forbids a handshake RTT sample.
    syn_resent: bool,
    handshake_at: Option<SimTime>,
    syn_timer_expired: bool,
    ts_recent: u32,
    close_requested: bool,
    delivered_reported: u64,
    all_acked_reported: bool,
    closed_reported: bool,
    peer_closed_reported: bool,
    pub stats: EndpointStats,
}

impl Endpoint {
    fn new(cfg: &TcpConfig, is_client: bool, peer: NodeId, declared_size: Option<u64>) -> Self {
        Endpoint {
            sender: Sender::new(cfg, false, false),
            receiver: Receiver::new(1, cfg.delayed_ack)
                .with_quickack(cfg.quickack)
                .with_dsack(cfg.dsack)
                .with_clock(TimerClock::new(cfg.hz)),
            cfg: cfg.clone(),
            state: if is_client { State::Closed } else { State::Listen },
            is_client,
            peer,
            declared_size,
            sack_ok: false,
            ts_ok: false,
            ecn_ok: false,
            syn_sent_at: SimTime::ZERO,
            syn_resent: false,
            handshake_at: None,
            syn_timer_expired: false,
            ts_recent: 0,
            close_requested: false,
            delivered_reported: 0,
            all_acked_reported: false,
            closed_reported: false,
            peer_closed_reported: false,
            stats: EndpointStats::default(),
        }
    }

    /// The active opener. `declared_size` is what it will send (for size-based IW policies).
    pub fn client(cfg: &TcpConfig, peer: NodeId, declared_size: Option<u64>) -> Self {
        Self::new(cfg, true, peer, declared_size)
    }
    /// The passive opener, in LISTEN.
    pub fn server(cfg: &TcpConfig, peer: NodeId, declared_size: Option<u64>) -> Self {
        Self::new(cfg, false, peer, declared_size)
    }

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::TimeWait | State::Failed)
    }
    pub fn set_declared_size(&mut self, s: Option<u64>) {
        self.declared_size = s;
    }

    /// When `on_timer` must next be called.
    pub fn next_timeout(&self) -> Option<SimTime> {
        let t = SimTime::earliest(self.handshake_at, self.receiver.delack_deadline());
        SimTime::earliest(t, SimTime::earliest(self.sender.rto_deadline(), self.sender.pacing_deadline()))
    }

    /// Active open: send a SYN.
    pub fn connect(&mut self, now: SimTime, out: &mut Outbox) {
        debug_assert_eq!(self.state, State::Closed);
        self.state = State::SynSent;
        self.send_syn(now, false, out);
    }

    /// The application writes `bytes`.
    pub fn write(&mut self, now: SimTime, bytes: u64, iw: &mut AnyIw, out: &mut Outbox) {
        self.sender.write(bytes);
        self.all_acked_reported = false;
        if self.state == State::Established {
            self.transmit(now, iw, out);
        }
    }

    /// The application writes `bytes` and closes at once (an HTTP/1.0 server's last act).
    /// By default the FIN rides on the segment that carries the last byte, as a stack that
    /// queues both before transmitting sends it. With `fin_after_write` the write is sent
    /// first, as Linux's tcp_sendmsg() pushes it before the application's close() reaches
    /// tcp_send_fin(): the FIN joins the last segment only if that is still unsent, else it
    /// follows alone when cwnd has room.
    pub fn write_and_close(&mut self, now: SimTime, bytes: u64, iw: &mut AnyIw, out: &mut Outbox) {
        if self.close_requested {
            return;
        }
        if self.cfg.fin_after_write {
            self.write(now, bytes, iw, out);
        } else {
            self.sender.write(bytes);
            self.all_acked_reported = false;
        }
        self.close(now, iw, out);
    }

    /// The application closes its direction: a FIN follows its data.
    pub fn close(&mut self, now: SimTime, iw: &mut AnyIw, out: &mut Outbox) {
        if self.close_requested {
            return;
        }
        self.close_requested = true;
        self.sender.request_fin();
        if self.state == State::Established {
            self.transmit(now, iw, out);
        }
    }

    fn send_syn(&mut self, now: SimTime, retransmit: bool, out: &mut Outbox) {
        let mut flags = Flags::SYN;
        if !self.is_client {
            flags.insert(Flags::ACK);
        }
        // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR; the SYN-ACK carries ECE.
        if self.is_client && self.cfg.ecn {
            flags.insert(Flags::ECE | Flags::CWR);
        } else if !self.is_client && self.ecn_ok {
            flags.insert(Flags::ECE);
        }
        let seg = Segment {
            seq: 0,
            ack: if self.is_client { 0 } else { 1 },
            flags,
            wnd: self.cfg.advertised_window(0),
            mss: Some(self.cfg.mss.min(u16::MAX as u32) as u16),
            sack_permitted: if self.is_client { self.cfg.sack } else { self.sack_ok },
            ts: (if self.is_client { self.cfg.timestamps } else { self.ts_ok })
                .then(|| (ts_value(now), self.ts_recent)),
            retransmit,
            ..Default::default()
        };
        out.segments.push((seg, Ecn::NotEct));
        self.syn_sent_at = now;
        self.syn_resent |= retransmit;
        self.handshake_at = Some(now + self.sender.rtt.rto());
    }

    /// A segment arrived; `ce` if its IP header said Congestion Experienced.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment, ce: bool, iw: &mut AnyIw, out: &mut Outbox) {
        match self.state {
            State::Listen if seg.is_syn() && !seg.has_ack() => {
                self.sack_ok = self.cfg.sack && seg.sack_permitted;
                self.ts_ok = self.cfg.timestamps && seg.ts.is_some();
                self.ecn_ok = self.cfg.ecn && seg.flags.contains(Flags::ECE | Flags::CWR);
                self.ts_recent = seg.ts.map_or(0, |t| t.0);
                self.state = State::SynReceived;
                self.send_syn(now, false, out);
            }
            State::SynReceived if seg.is_syn() && !seg.has_ack() => {
                // The client retransmitted its SYN: answer again. Only our own timer's
                // expirations count as SYN-ACK loss (one loss must not count twice when the
                // duplicate SYN and our timer coincide).
                self.send_syn(now, true, out);
            }
            State::SynReceived if seg.has_ack() && seg.ack >= 1 => {
                if !self.syn_resent {
                    let (una, nxt) = (self.sender.snd_una, self.sender.snd_nxt);
                    self.sender.rtt.sample(now - self.syn_sent_at, una, nxt);
                }
                self.establish(now, iw, out);
                self.on_synchronized(now, seg, ce, iw, out);
            }
            State::SynSent if seg.is_syn() && seg.has_ack() && seg.ack == 1 => {
                self.sack_ok = self.cfg.sack && seg.sack_permitted;
                self.ts_ok = self.cfg.timestamps && seg.ts.is_some();
                self.ecn_ok = self.cfg.ecn && seg.flags.contains(Flags::ECE);
                self.ts_recent = seg.ts.map_or(0, |t| t.0);
                // Karn: no RTT sample from a retransmitted SYN.
                if !self.syn_resent {
                    let (una, nxt) = (self.sender.snd_una, self.sender.snd_nxt);
                    self.sender.rtt.sample(now - self.syn_sent_at, una, nxt);
                }
                self.establish(now, iw, out);
                let before = out.segments.len();
                self.transmit(now, iw, out);
                if out.segments.len() == before {
                    self.send_ack(now, out); // the third segment of the handshake
                }
            }
            State::Established | State::TimeWait if seg.is_syn() => {
                // A retransmitted SYN-ACK: our handshake ACK was lost. ACK it again.
                self.send_ack(now, out);
            }
            State::Established | State::TimeWait => self.on_synchronized(now, seg, ce, iw, out),
            _ => {} // anything else is not for us (no RST modelled)
        }
    }

    fn retransmit_syn(&mut self, now: SimTime, out: &mut Outbox) {
        self.stats.syn_retransmits += 1;
        self.send_syn(now, true, out);
    }

    fn establish(&mut self, now: SimTime, iw: &mut AnyIw, out: &mut Outbox) {
        self.handshake_at = None;
        self.state = State::Established;
        self.stats.established_at = Some(now);
        let mut rtt = self.sender.rtt.clone();
        if self.syn_timer_expired {
            // RFC 6298 (5.7): data starts with a 3 s RTO after a SYN timeout.
            rtt.reset_after_syn_timeout();
        }
        let mut sender = Sender::new(&self.cfg, self.sack_ok, self.ts_ok);
        sender.rtt = rtt;
        // The application may have written before the handshake finished.
        sender.write(self.sender.bytes_written());
        if self.close_requested {
            sender.request_fin();
        }
        let ctx = self.iw_context(now);
        let mut iw_bytes = iw.initial_window(&ctx);
        let reduce = match self.cfg.syn_loss {
            // RFC 5681 §3.1 / RFC 3390: after a lost SYN or SYN-ACK the IW is one segment.
            SynLossRule::ReduceToOne => self.stats.syn_retransmits >= 1,
            // RFC 6928 §2: only after more than one SYN or SYN-ACK retransmission.
            SynLossRule::Rfc6928 => self.stats.syn_retransmits > 1,
        };
        if reduce {
            iw_bytes = self.cfg.mss as u64;
        }
        sender.start(iw_bytes);
        self.sender = sender;
        self.stats.iw_bytes = iw_bytes;
        out.events.push(AppEvent::Established);
    }

    fn iw_context(&self, now: SimTime) -> IwContext {
        IwContext { mss: self.cfg.mss as u64, dst: self.peer, declared_size: self.declared_size, now }
    }

    fn on_synchronized(&mut self, now: SimTime, seg: &Segment, ce: bool, iw: &mut AnyIw, out: &mut Outbox) {
        let before = out.segments.len();
        if seg.has_ack() {
            out.tx.clear();
            self.sender.on_ack(now, seg, self.ecn_ok, &mut out.tx);
            self.emit(now, out);
        }
        if self.ts_ok {
            if let Some((val, _)) = seg.ts {
                self.ts_recent = val;
            }
        }
        if ce && seg.len > 0 {
            self.stats.ce_received += 1;
        }
        let need = self.receiver.on_segment(
            now,
            seg.seq,
            seg.len,
            seg.is_fin(),
            ce && self.ecn_ok,
            seg.flags.contains(Flags::CWR),
        );
        self.transmit(now, iw, out);
        let acked_now = out.segments[before..].iter().any(|(s, _)| s.has_ack());
        if need == AckNeed::Now && !acked_now {
            self.send_ack(now, out);
        }
        self.report(now, iw, out);
    }

    /// Sends what the window allows, after the RFC 5681 §4.1 idle check.
    fn transmit(&mut self, now: SimTime, iw: &mut AnyIw, out: &mut Outbox) {
        if self.cfg.restart_after_idle && self.sender.idle_restart_due(now) {
            let ctx = self.iw_context(now);
            let rw = iw.restart_window(&ctx, self.sender.iw_loss);
            self.sender.restart_after_idle(rw, now);
        }
        out.tx.clear();
        self.sender.transmit(now, &mut out.tx);
        self.emit(now, out);
    }

    /// Turns the sender's queued transmissions into segments carrying our ACK state.
    fn emit(&mut self, now: SimTime, out: &mut Outbox) {
        for i in 0..out.tx.len() {
            let t = out.tx[i];
            let mut seg = self.ack_segment(now);
            seg.seq = t.seq;
            seg.len = t.len;
            seg.retransmit = t.retransmit;
            if t.fin {
                seg.flags.insert(Flags::FIN);
            }
            if self.sender.cwr_pending && t.len > 0 && !t.retransmit {
                // RFC 3168 §6.1.2: CWR on the first new data segment after reducing.
                seg.flags.insert(Flags::CWR);
                self.sender.cwr_pending = false;
            }
            // RFC 3168 §6.1.5: retransmissions and pure ACKs are not ECN-capable.
            let ecn = if self.ecn_ok && t.len > 0 && !t.retransmit { Ecn::Ect0 } else { Ecn::NotEct };
            out.segments.push((seg, ecn));
        }
        out.tx.clear();
    }

    fn ack_segment(&mut self, now: SimTime) -> Segment {
        let mut flags = Flags::ACK;
        if self.receiver.ece && self.ecn_ok {
            flags.insert(Flags::ECE);
        }
        let sack = if self.sack_ok {
            // RFC 2018 §3: at most 4 blocks, 3 when timestamps are in use.
            self.receiver.sack_blocks(if self.ts_ok { 3 } else { 4 })
        } else {
            SackBlocks::default()
        };
        self.receiver.on_ack_sent();
        Segment {
            seq: self.sender.snd_nxt.max(1),
            ack: self.receiver.rcv_nxt,
            flags,
            wnd: self.cfg.advertised_window(self.receiver.delivered()),
            sack,
            ts: self.ts_ok.then(|| (ts_value(now), self.ts_recent)),
            ..Default::default()
        }
    }

    fn send_ack(&mut self, now: SimTime, out: &mut Outbox) {
        let seg = self.ack_segment(now);
        out.segments.push((seg, Ecn::NotEct));
    }

    /// Reports progress to the application and the IW policy; advances the close states.
    fn report(&mut self, now: SimTime, iw: &mut AnyIw, out: &mut Outbox) {
        if self.sender.iw_loss_new {
            self.sender.iw_loss_new = false;
            if let Some(bytes_sent) = self.sender.iw_loss {
                let kind = IwEventKind::LossInInitialWindow { bytes_sent };
                iw.learn(&IwEvent { dst: self.peer, now, kind });
            }
        }
        let delivered = self.receiver.delivered();
        if delivered > self.delivered_reported {
            self.delivered_reported = delivered;
            out.events.push(AppEvent::Delivered { total: delivered });
        }
        if self.sender.bytes_written() > 0 && self.sender.all_acked() && !self.all_acked_reported {
            self.all_acked_reported = true;
            out.events.push(AppEvent::AllAcked);
        }
        if self.receiver.fin_received() && !self.peer_closed_reported {
            self.peer_closed_reported = true;
            out.events.push(AppEvent::PeerClosed);
        }
        if self.receiver.fin_received() && self.sender.fin_acked() && !self.closed_reported {
            self.closed_reported = true;
            self.state = State::TimeWait;
            out.events.push(AppEvent::Closed);
            let s = &self.sender;
            let kind = IwEventKind::Closed {
                bytes_sent: s.bytes_written(),
                loss: s.any_loss,
                cwnd: s.w.cwnd,
                bytes_acked: (s.snd_una - 1).min(s.bytes_written()),
                retrans: s.stats.retransmits,
            };
            iw.learn(&IwEvent { dst: self.peer, now, kind });
        }
    }

    /// Fires whatever timers are due at `now`.
    pub fn on_timer(&mut self, now: SimTime, iw: &mut AnyIw, out: &mut Outbox) {
        if self.handshake_at.is_some_and(|t| t <= now) {
            self.handshake_at = None;
            self.syn_timer_expired = true;
            self.sender.rtt.on_timeout();
            if self.stats.syn_retransmits >= self.cfg.syn_retries {
                self.state = State::Failed;
                out.events.push(AppEvent::Failed);
                return;
            }
            self.retransmit_syn(now, out);
        }
        if self.receiver.delack_deadline().is_some_and(|t| t <= now) {
            self.send_ack(now, out);
        }
        if self.sender.rto_deadline().is_some_and(|t| t <= now) {
            out.tx.clear();
            self.sender.on_rto(now, &mut out.tx);
            self.emit(now, out);
            self.report(now, iw, out);
        }
        // Pacing (tcp/pacing.rs) released a segment it held back.
        if self.state == State::Established && self.sender.pacing_deadline().is_some_and(|t| t <= now) {
            self.transmit(now, iw, out);
        }
    }
}
