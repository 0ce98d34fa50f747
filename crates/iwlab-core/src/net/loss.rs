//! Loss rules: a link stage that drops chosen packets before they reach the queue, as if
//! corrupted on the wire. Scripted rules drop exact segments (tests of recovery); the random
//! rule drops with a fixed probability from the link's own random stream.

use super::packet::{FlowId, Packet, Payload};
use crate::engine::SimRng;
use rand::Rng;

#[derive(Clone, Debug, PartialEq)]
pub enum LossRule {
    /// Drop the `nth` (1-based) transmission of the data segment of connection `flow` whose
    /// sequence number is `seq` (1 = first data byte), travelling toward the server if
    /// `to_server`.
    Segment { flow: FlowId, to_server: bool, seq: u64, nth: u32 },
    /// Drop the `nth` transmission of the SYN of connection `flow`.
    Syn { flow: FlowId, nth: u32 },
    /// Drop the `nth` transmission of the SYN-ACK of connection `flow`.
    SynAck { flow: FlowId, nth: u32 },
    /// Drop every packet with probability `p`.
    Random { p: f64 },
    /// Drop the `nth` transmission of a pure ACK (no data, SYN or FIN) of connection `flow`
    /// acknowledging up to `ack`, travelling toward the server if `to_server`.
    Ack { flow: FlowId, to_server: bool, ack: u64, nth: u32 },
    /// Drop QUIC datagrams `first..first + count` (1-based, in the order they reach this
    /// stage) of connection `flow` travelling toward the server if `to_server`.
    Datagrams { flow: FlowId, to_server: bool, first: u32, count: u32 },
}

/// The loss stage of one link direction.
#[derive(Clone, Debug, Default)]
pub struct LossStage {
    rules: Vec<(LossRule, u32)>,
}

impl LossStage {
    pub fn add(&mut self, rule: LossRule) {
        self.rules.push((rule, 0));
    }
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Does this stage drop `pkt`? Updates the rules' counters.
    pub fn drops(&mut self, pkt: &Packet, rng: &mut SimRng) -> bool {
        let mut drop = false;
        for (rule, seen) in &mut self.rules {
            // Scripted rules count the transmissions they match and drop the nth.
            let (matched, nth) = match (&*rule, &pkt.payload) {
                (LossRule::Segment { flow, to_server, seq, nth }, Payload::Tcp { seg, to_server: dir }) => {
                    (pkt.flow == *flow && dir == to_server && seg.seq == *seq && seg.len > 0, *nth)
                }
                (LossRule::Syn { flow, nth }, Payload::Tcp { seg, .. }) => {
                    (pkt.flow == *flow && seg.is_syn() && !seg.has_ack(), *nth)
                }
                (LossRule::SynAck { flow, nth }, Payload::Tcp { seg, .. }) => {
                    (pkt.flow == *flow && seg.is_syn() && seg.has_ack(), *nth)
                }
                (LossRule::Ack { flow, to_server, ack, nth }, Payload::Tcp { seg, to_server: dir }) => {
                    let pure = seg.len == 0 && !seg.is_syn() && !seg.is_fin() && seg.has_ack();
                    (pkt.flow == *flow && dir == to_server && pure && seg.ack == *ack, *nth)
                }
                (LossRule::Datagrams { flow, to_server, first, count }, Payload::Quic { to_server: dir, .. }) => {
                    if pkt.flow == *flow && dir == to_server {
                        *seen += 1;
                        drop |= *seen >= *first && *seen - *first < *count;
                    }
                    continue;
                }
                (LossRule::Random { p }, _) => {
                    drop |= rng.gen::<f64>() < *p;
                    continue;
                }
                _ => (false, 0),
            };
            if matched {
                *seen += 1;
                drop |= *seen == nth;
            }
        }
        drop
    }
}
