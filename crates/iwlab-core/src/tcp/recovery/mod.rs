//! Loss recovery. The variants, one per file — Reno (RFC 5681 §3.2), NewReno (RFC 6582),
//! SACK-based (RFC 6675), RACK (RFC 8985 §6) — implement [`RecoveryOps`] (`ops.rs`) over the
//! control block and are dispatched through [`AnyRecovery`], as `cc::AnyCc` does for
//! congestion control. The mechanisms they share own their state in their files: PRR (RFC
//! 6937, `prr.rs`), TLP (RFC 8985 §7, `tlp.rs`), undo and F-RTO (`undo.rs`), D-SACK (RFC
//! 2883, `dsack.rs`). When the CA state moves — recovery starts, ends, is undone, an RTO —
//! is decided in one place, `tcp/ca_state.rs`. No file here names the sender.

pub mod dsack;
pub mod newreno;
pub mod ops;
pub mod prr;
pub mod rack;
pub mod reno;
pub mod sack;
pub mod tlp;
pub mod undo;

use crate::engine::SimTime;
use crate::tcp::config::RecoveryKind;
use crate::tcp::tcb::{Tcb, TxSeg};
use newreno::NewReno;
pub use ops::{Ctx, Mechanisms, RecoveryOps};
use rack::Rack;
use reno::Reno;
use sack::Sack;

/// The configured variant (`tcp.recovery`).
#[derive(Clone, Debug)]
pub enum AnyRecovery {
    Reno(Reno),
    NewReno(NewReno),
    Sack(Sack),
    Rack(Rack),
}

impl AnyRecovery {
    pub fn new(kind: RecoveryKind) -> Self {
        match kind {
            RecoveryKind::Reno => AnyRecovery::Reno(Reno),
            RecoveryKind::NewReno => AnyRecovery::NewReno(NewReno),
            RecoveryKind::Sack => AnyRecovery::Sack(Sack),
            RecoveryKind::Rack => AnyRecovery::Rack(Rack),
        }
    }
}

macro_rules! each_recovery {
    ($self:ident, $r:ident => $e:expr) => {
        match $self {
            AnyRecovery::Reno($r) => $e,
            AnyRecovery::NewReno($r) => $e,
            AnyRecovery::Sack($r) => $e,
            AnyRecovery::Rack($r) => $e,
        }
    };
}

impl RecoveryOps for AnyRecovery {
    fn undoable(&self) -> bool {
        each_recovery!(self, r => r.undoable())
    }
    fn dupack_starts_recovery(&mut self, c: &mut Ctx) -> bool {
        each_recovery!(self, r => r.dupack_starts_recovery(c))
    }
    fn on_dupack_in_recovery(&mut self, c: &mut Ctx) {
        each_recovery!(self, r => r.on_dupack_in_recovery(c))
    }
    fn on_enter(&mut self, c: &mut Ctx, now: SimTime) {
        each_recovery!(self, r => r.on_enter(c, now))
    }
    fn fast_retransmit(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
        each_recovery!(self, r => r.fast_retransmit(c, now, out))
    }
    fn recovery_point_reached(&self, t: &Tcb) -> bool {
        each_recovery!(self, r => r.recovery_point_reached(t))
    }
    fn on_exit(&mut self, c: &mut Ctx) {
        each_recovery!(self, r => r.on_exit(c))
    }
    fn on_partial_ack(&mut self, c: &mut Ctx, now: SimTime, acked: u64, out: &mut Vec<TxSeg>) {
        each_recovery!(self, r => r.on_partial_ack(c, now, acked, out))
    }
    fn rearms_rto_in_recovery(&self, t: &Tcb) -> bool {
        each_recovery!(self, r => r.rearms_rto_in_recovery(t))
    }
    fn pipe(&self, t: &Tcb) -> u64 {
        each_recovery!(self, r => r.pipe(t))
    }
    fn send_in_recovery(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) -> bool {
        each_recovery!(self, r => r.send_in_recovery(c, now, out))
    }
    fn detects_by_time(&self) -> bool {
        each_recovery!(self, r => r.detects_by_time())
    }
    fn detect(&mut self, c: &mut Ctx, now: SimTime, on_ack: bool) -> bool {
        each_recovery!(self, r => r.detect(c, now, on_ack))
    }
}
