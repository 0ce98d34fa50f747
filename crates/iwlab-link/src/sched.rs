//! Scheduling of the relay's thread. This kernel runs with `preempt=none`: a task woken by its
//! timer waits until whatever runs on its CPU leaves the kernel. Under `SCHED_OTHER` that
//! measured a p99 lateness of ~2 ms at 10 Mb/s with busy TCP endpoints on a 2-core VM; under
//! `SCHED_FIFO` ~30 µs (see the README). The relay sleeps between events, so a real-time
//! priority cannot starve the machine. Never combine it with a long `--spin` (busy polling): the
//! kernel's fair-server throttling then stops the relay for up to 50 ms.

use std::io;

/// `SCHED_FIFO` at `priority` (1..=99) for the calling thread; 0 leaves the policy alone.
pub fn set_realtime(priority: u32) -> io::Result<()> {
    if priority == 0 {
        return Ok(());
    }
    let p = libc::sched_param { sched_priority: priority.min(99) as libc::c_int };
    // SAFETY: valid sched_param; pid 0 = the calling thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET checks nothing beyond the set's size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("cpu = {cpu} is out of range")));
        }
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
