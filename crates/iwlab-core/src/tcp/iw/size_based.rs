//! IW as a function of the flow size (You et al., IETF 91; Barik & Divakaran, LCN 2013):
//! IW(s) = V if s ≤ θ, else ⌊(θ/s)·V + (1 − θ/s)·MinIW⌋ segments.
//! A connection that declared no size is treated as unbounded: the limit, MinIW.

use super::policy::{IwContext, IwPolicy};

#[derive(Clone, Debug)]
pub struct SizeBased {
    theta: u64,
    v: u32,
    min_iw: u32,
}

impl SizeBased {
    pub fn new(theta_bytes: u64, v: u32, min_iw: u32) -> Self {
        assert!(theta_bytes > 0 && v > 0 && min_iw > 0, "validated by the scenario");
        SizeBased { theta: theta_bytes, v, min_iw }
    }

    /// IW in segments for a flow of `s` bytes, computed exactly in integers:
    /// ⌊(θ·V + (s − θ)·MinIW) / s⌋.
    pub fn segments_for(&self, s: Option<u64>) -> u32 {
        match s {
            Some(s) if s <= self.theta => self.v,
            Some(s) => {
                let (s, t) = (s as u128, self.theta as u128);
                ((t * self.v as u128 + (s - t) * self.min_iw as u128) / s) as u32
            }
            None => self.min_iw,
        }
    }
}

impl IwPolicy for SizeBased {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        self.segments_for(ctx.declared_size) as u64 * ctx.mss
    }
    fn name(&self) -> &'static str {
        "size-based"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iw_of_a_flow_size_follows_the_function_for_theta_200kb_v10_miniw4() {
        let p = SizeBased::new(200_000, 10, 4);
        let table = [
            (1, 10),
            (14_600, 10),
            (200_000, 10),    // s = θ: still small
            (200_001, 9),     // ⌊9.99997⌋
            (250_000, 8),     // 0.8·10 + 0.2·4 = 8.8
            (300_000, 8),     // 6.67 + 1.33 = 8 exactly
            (400_000, 7),     // 5 + 2
            (1_000_000, 5),   // 2 + 3.2
            (2_000_000, 4),   // 1 + 3.6
            (100_000_000, 4), // → MinIW
        ];
        for (s, iw) in table {
            assert_eq!(p.segments_for(Some(s)), iw, "flow of {s} bytes");
        }
    }

    #[test]
    fn an_undeclared_size_gets_min_iw() {
        assert_eq!(SizeBased::new(200_000, 32, 4).segments_for(None), 4);
    }

    #[test]
    fn window_is_segments_times_mss() {
        let mut p = SizeBased::new(200_000, 16, 4);
        let ctx = IwContext { mss: 1460, dst: 0, declared_size: Some(5000), now: Default::default() };
        assert_eq!(p.initial_window(&ctx), 16 * 1460);
    }
}
