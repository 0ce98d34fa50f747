//! TUN devices through the kernel's own interface (`/dev/net/tun` + `TUNSETIFF`, see
//! Documentation/networking/tuntap.rst), with `libc`: a few ioctls do not justify a crate.
//!
//! Opening attaches to an existing device of that name (`ip tuntap add NAME mode tun`, the
//! recommended way: it persists, so routes can point at it before the relay starts) or creates a
//! non-persistent one that disappears when the relay exits. Either way the device is brought up.
//! Packets are raw IP (`IFF_NO_PI`): one `read` = one packet, one `write` = one packet.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(['/', ' ', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("tun = {name:?} is not an interface name; allowed: 1..=15 bytes, no '/', space or NUL"),
        ));
    }
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(ifr)
}

fn check(r: libc::c_int, what: &str, name: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what} {name}: {e}")))
    } else {
        Ok(r)
    }
}

/// An `AF_INET` datagram socket, the handle for interface ioctls.
fn ctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall; the fd is owned right away.
    let fd = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) }, "socket", "")?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens (attaching to or creating) TUN device `name`, non-blocking, brings it up and returns
/// its fd and MTU.
pub fn open(name: &str) -> io::Result<(OwnedFd, usize)> {
    let mut ifr = ifreq(name)?;
    // SAFETY: constant NUL-terminated path.
    let fd =
        unsafe { libc::open(b"/dev/net/tun\0".as_ptr().cast(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    let fd = unsafe { OwnedFd::from_raw_fd(check(fd, "open /dev/net/tun for", name)?) };
    ifr.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads and writes one ifreq.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF as _, &mut ifr) }, "TUNSETIFF", name)?;

    let sock = ctl_socket()?;
    let mut ifr = ifreq(name)?;
    // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS/SIOCGIFMTU read/write one ifreq.
    unsafe {
        check(libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut ifr), "SIOCGIFFLAGS", name)?;
        if ifr.ifr_ifru.ifru_flags & libc::IFF_UP as libc::c_short == 0 {
            ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            check(libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS as _, &ifr), "bring up (SIOCSIFFLAGS)", name)?;
        }
        let mut ifr = ifreq(name)?;
        check(libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFMTU as _, &mut ifr), "SIOCGIFMTU", name)?;
        let mtu = ifr.ifr_ifru.ifru_mtu.max(0) as usize;
        wait_running(&sock, name)?;
        Ok((fd, mtu))
    }
}

/// Waits (up to 2 s) for `IFF_RUNNING`. Attaching turns the carrier on, but the kernel's
/// linkwatch work activates the device's qdisc a little later; until then packets routed into
/// the TUN are dropped (seen as tx_dropped, about one start in fifteen in the namespace test).
fn wait_running(sock: &OwnedFd, name: &str) -> io::Result<()> {
    let t0 = std::time::Instant::now();
    loop {
        let mut ifr = ifreq(name)?;
        // SAFETY: SIOCGIFFLAGS reads one ifreq.
        let flags = unsafe {
            check(libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut ifr), "SIOCGIFFLAGS", name)?;
            ifr.ifr_ifru.ifru_flags
        };
        if flags & libc::IFF_RUNNING as libc::c_short != 0 {
            // linkwatch sets the operational state just before it activates the qdisc.
            std::thread::sleep(std::time::Duration::from_millis(1));
            return Ok(());
        }
        if t0.elapsed() > std::time::Duration::from_secs(2) {
            return Err(io::Error::new(io::ErrorKind::TimedOut, format!("{name} is not running 2 s after attaching")));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Is `/dev/net/tun` there and openable (for tests that need it)?
pub fn available() -> bool {
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/net/tun").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_names_are_refused_before_any_syscall() {
        for bad in ["", "a-name-longer-than-15", "x/y", "has space"] {
            let e = open(bad).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
            assert!(e.to_string().starts_with("tun = "), "{e}");
        }
    }
}
