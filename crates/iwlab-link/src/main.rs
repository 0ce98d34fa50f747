//! `iwlab-link`: see `iwlab-link --help` and the crate README.

use clap::Parser;
use iwlab_link::config::{Args, Plan};
use iwlab_link::relay::{describe_queue, DirectionSpec, Relay, RelayConfig};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = Args::parse();
    let plan = match Plan::from_args(&args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iwlab-link: {e}");
            return ExitCode::from(2);
        }
    };
    match run(plan) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("iwlab-link: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(plan: Plan) -> std::io::Result<()> {
    let mut dirs = Vec::new();
    let mut max_mtu = 0;
    for (name, params) in &plan.links {
        let (fd, mtu) = iwlab_link::tun::open(name)?;
        max_mtu = max_mtu.max(mtu);
        dirs.push(DirectionSpec { name: name.clone(), fd, params: params.clone() });
    }
    // A slot holds the largest packet with room to spare (a read that fills it is refused).
    let slot_bytes = (max_mtu + 1).max(2048).next_multiple_of(64);
    let cfg = RelayConfig {
        seed: plan.seed,
        pool_slots: plan.pool_slots,
        slot_bytes,
        spin: plan.spin,
        stats_json: plan.stats_json.clone(),
        duration: plan.duration,
    };
    let mut relay = Relay::new(dirs, cfg)?;
    if let Some(cpu) = plan.cpu {
        iwlab_link::sched::pin_to_cpu(cpu).map_err(|e| std::io::Error::new(e.kind(), format!("cpu {cpu}: {e}")))?;
    }
    if let Err(e) = iwlab_link::sched::set_realtime(plan.rt_priority) {
        eprintln!(
            "iwlab-link: warning: SCHED_FIFO priority {} refused ({e}); expect ms-scale lateness",
            plan.rt_priority
        );
    }
    relay.control().install_signal_handlers()?;
    let desc: Vec<String> = plan
        .links
        .iter()
        .map(|(n, p)| {
            format!("{n}: {} b/s, delay {}, {}, loss {}", p.rate_bps, p.delay, describe_queue(&p.queue), p.loss)
        })
        .collect();
    eprintln!("iwlab-link: ready; {}", desc.join("; "));
    let report = relay.run()?;
    for d in &report.directions {
        eprintln!(
            "iwlab-link: {}: in {} out {} queue_drops {} marks {} loss_drops {} lateness p50 {} p99 {} max {} us",
            d.tun,
            d.counters.packets_in,
            d.counters.packets_out,
            d.counters.queue_drops,
            d.counters.marks,
            d.counters.loss_drops,
            d.lateness_us.p50,
            d.lateness_us.p99,
            d.lateness_us.max
        );
    }
    Ok(())
}
