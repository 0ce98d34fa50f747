//! CUBIC (RFC 9438). PLACEHOLDER — being written; behaves as Reno until then.

use super::{reno::Reno, AckInfo, CongestionControl, Window};
use crate::engine::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    /// Multiplicative decrease factor β_cubic (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// C (RFC 9438 §5: 0.4), in segments / s³.
    pub c: f64,
    /// Fast convergence (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// Reno-friendly region (RFC 9438 §4.3).
    pub reno_friendly: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig { beta: 0.7, c: 0.4, fast_convergence: true, reno_friendly: true }
    }
}

pub struct Cubic {
    _cfg: CubicConfig,
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        Cubic { _cfg: cfg }
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        Reno.on_ack(w, ack)
    }
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u64, now: SimTime) -> u64 {
        Reno.ssthresh_on_loss(w, flight, now)
    }
}
