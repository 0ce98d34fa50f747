//! RFC 3390 (1): IW = min(4*MSS, max(2*MSS, 4380 bytes)).

use super::policy::{IwContext, IwPolicy};

#[derive(Clone, Debug, Default)]
pub struct Rfc3390;

/// The RFC 3390 upper bound, in bytes.
pub fn rfc3390_window(mss: u64) -> u64 {
    (4 * mss).min((2 * mss).max(4380))
}

impl IwPolicy for Rfc3390 {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        rfc3390_window(ctx.mss)
    }
    fn name(&self) -> &'static str {
        "rfc3390"
    }
}
