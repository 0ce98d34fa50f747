//! A fixed initial window of N segments (Linux `ip route … initcwnd N`; RFC 2001's IW = 1).

use super::policy::{IwContext, IwPolicy};

#[derive(Clone, Debug)]
pub struct Fixed {
    segments: u32,
}

impl Fixed {
    pub fn new(segments: u32) -> Self {
        assert!(segments > 0, "IW of 0 segments is rejected by scenario validation");
        Fixed { segments }
    }
}

impl IwPolicy for Fixed {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        self.segments as u64 * ctx.mss
    }
    fn name(&self) -> &'static str {
        "fixed"
    }
}
