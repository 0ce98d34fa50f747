//! RFC 6928 §2: IW = min(10*MSS, max(2*MSS, 14600 bytes)).

use super::policy::{IwContext, IwPolicy};

#[derive(Clone, Debug, Default)]
pub struct Rfc6928;

/// The RFC 6928 upper bound, in bytes.
pub fn rfc6928_window(mss: u64) -> u64 {
    (10 * mss).min((2 * mss).max(14600))
}

impl IwPolicy for Rfc6928 {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        rfc6928_window(ctx.mss)
    }
    fn name(&self) -> &'static str {
        "rfc6928"
    }
}
