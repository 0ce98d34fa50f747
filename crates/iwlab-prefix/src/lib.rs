//! Destination prefixes of policy routes, and which route covers an address: the one definition
//! behind a scenario's `[[iw.routes]]` and a policy file's `[[routes]]` (iwlab-core), the eBPF
//! reader's per-prefix sums (iwlab-bpf, `evidence --prefix`) and `PolicyFile.route_for` in
//! Python (through iwlab-py).
//!
//! A route's prefix is `default` or an IPv4/IPv6 network in CIDR form with its host bits zero.
//! An address is covered by the longest prefix of its own family that contains it (as the
//! kernel's FIB lookup chooses, `fib_table_lookup()`); of prefixes of equal length the first
//! listed wins (validated route lists hold no two equal prefixes, so it only matters to
//! unchecked lists); an address no network covers falls to the first `default`.

use std::fmt;
use std::net::IpAddr;

/// A destination prefix: an IPv4/IPv6 network, or the default route (both families).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Prefix {
    Default,
    Net { addr: IpAddr, len: u8 },
}

/// The address as a number and its family's width in bits.
fn bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
        IpAddr::V6(a) => (u128::from(a), 128),
    }
}

/// The low `host` bits set (all 128 for a /0 IPv6 network).
fn host_mask(host: u8) -> u128 {
    1u128.checked_shl(u32::from(host)).map_or(u128::MAX, |b| b - 1)
}

impl Prefix {
    /// What `parse` accepts, for error messages.
    pub const ALLOWED: &'static str = "\"default\" or an IPv4/IPv6 network in CIDR form with its host bits zero \
                                       (e.g. \"10.77.2.0/24\", \"2001:db8::/32\")";

    /// Parses `"default"` or a CIDR `ADDR/LEN` whose host bits are zero; the error says what
    /// is allowed and what is wrong.
    pub fn parse(s: &str) -> Result<Prefix, String> {
        let allowed = Self::ALLOWED;
        if s == "default" {
            return Ok(Prefix::Default);
        }
        let Some((a, l)) = s.split_once('/') else {
            return Err(format!("{allowed}; the prefix length is missing"));
        };
        let addr: IpAddr = a.parse().map_err(|_| format!("{allowed}; {a:?} is not an IP address"))?;
        let (n, width) = bits(addr);
        let len: u8 = match l.parse() {
            Ok(n) if n <= width => n,
            _ => return Err(format!("{allowed}; the length must be 0..={width}")),
        };
        let mask = host_mask(width - len);
        if n & mask != 0 {
            let net = n & !mask;
            let net: IpAddr = match addr {
                IpAddr::V4(_) => IpAddr::V4((net as u32).into()),
                IpAddr::V6(_) => IpAddr::V6(net.into()),
            };
            return Err(format!("{allowed}; the host bits are set (the network is {net}/{len})"));
        }
        Ok(Prefix::Net { addr, len })
    }

    /// Does this network contain `ip` (an address of its own family)? The default route
    /// contains nothing: it is the fallback when no network does.
    pub fn covers(&self, ip: IpAddr) -> bool {
        let Prefix::Net { addr, len } = *self else { return false };
        let ((n, width), (a, w2)) = (bits(addr), bits(ip));
        let mask = !host_mask(width - len);
        width == w2 && n & mask == a & mask
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Prefix::Default => f.write_str("default"),
            Prefix::Net { addr, len } => write!(f, "{addr}/{len}"),
        }
    }
}

/// The index of the prefix covering `ip`: the longest network of its family that contains it
/// (the first of equal length), else the first default route; None if neither exists.
pub fn longest_match<'a>(prefixes: impl IntoIterator<Item = &'a Prefix>, ip: IpAddr) -> Option<usize> {
    let mut best: Option<(usize, u8)> = None;
    let mut default = None;
    for (i, p) in prefixes.into_iter().enumerate() {
        match *p {
            Prefix::Net { len, .. } if p.covers(ip) && best.is_none_or(|(_, l)| len > l) => best = Some((i, len)),
            Prefix::Default if default.is_none() => default = Some(i),
            _ => {}
        }
    }
    best.map(|(i, _)| i).or(default)
}

/// The address a connection's peer is matched by: an IPv4-mapped IPv6 address
/// (`::ffff:a.b.c.d`, a dual-stack socket's IPv4 peer, RFC 4291 §2.5.5.2) is its IPv4 address.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(a) => a.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The route of a connection's peer, as the watcher and the eBPF reader key its evidence:
/// [`canonical`], then [`longest_match`]; a loopback peer has none (local traffic says nothing
/// about a path).
pub fn peer_match<'a>(prefixes: impl IntoIterator<Item = &'a Prefix>, ip: IpAddr) -> Option<usize> {
    let ip = canonical(ip);
    if ip.is_loopback() {
        return None;
    }
    longest_match(prefixes, ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Prefix {
        Prefix::parse(s).unwrap()
    }
    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }
    fn at(list: &[&str], a: &str) -> Option<usize> {
        longest_match(&list.iter().map(|s| p(s)).collect::<Vec<_>>(), ip(a))
    }

    #[test]
    fn a_prefix_is_default_or_a_network_with_its_host_bits_zero() {
        assert_eq!(p("default"), Prefix::Default);
        assert_eq!(p("10.77.2.0/24"), Prefix::Net { addr: ip("10.77.2.0"), len: 24 });
        assert_eq!(p("::/0"), Prefix::Net { addr: ip("::"), len: 0 });
        assert_eq!(p("0.0.0.0/0").to_string(), "0.0.0.0/0");
        for (bad, why) in [
            ("10.77.2.1/24", "the host bits are set (the network is 10.77.2.0/24)"),
            ("::1/0", "the host bits are set (the network is ::/0)"),
            ("10.0.0.0/33", "the length must be 0..=32"),
            ("2001:db8::/129", "the length must be 0..=128"),
            ("10.0.0.0", "the prefix length is missing"),
            ("x/8", "\"x\" is not an IP address"),
            ("Default", "the prefix length is missing"),
        ] {
            let e = Prefix::parse(bad).unwrap_err();
            assert!(e.starts_with(Prefix::ALLOWED) && e.ends_with(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_longest_prefix_of_the_addresss_family_covers_it_then_the_default_route() {
        let routes = ["default", "198.18.0.0/16", "198.18.0.0/30", "2001:db8::/32", "0.0.0.0/0"];
        assert_eq!(at(&routes, "198.18.0.2"), Some(2));
        assert_eq!(at(&routes, "198.18.0.6"), Some(1));
        assert_eq!(at(&routes, "10.0.0.1"), Some(4)); // 0.0.0.0/0 is a network, before default
        assert_eq!(at(&routes, "2001:db8::1"), Some(3));
        assert_eq!(at(&routes, "::1"), Some(0)); // no IPv6 network covers it
        assert_eq!(at(&routes[1..], "2001:db9::1"), None);
        assert_eq!(at(&["10.0.0.0/8"], "::ffff:10.0.0.1"), None); // a v6 address, as given
    }

    #[test]
    fn of_equal_prefixes_the_first_and_of_default_routes_the_first_wins() {
        let dup = [Prefix::Default, p("10.0.0.0/8"), p("10.0.0.0/8"), Prefix::Default];
        assert_eq!(longest_match(&dup, ip("10.1.1.1")), Some(1));
        assert_eq!(longest_match(&dup, ip("11.1.1.1")), Some(0));
    }

    #[test]
    fn a_host_route_and_the_whole_space_are_prefixes_like_any_other() {
        assert_eq!(at(&["198.18.0.2/32", "0.0.0.0/0"], "198.18.0.2"), Some(0));
        assert_eq!(at(&["198.18.0.2/32", "0.0.0.0/0"], "198.18.0.3"), Some(1));
        assert_eq!(at(&["2001:db8::1/128", "::/0"], "2001:db8::1"), Some(0));
        assert_eq!(at(&["2001:db8::1/128", "::/0"], "2001:db8::2"), Some(1));
    }

    #[test]
    fn a_peer_is_matched_as_ipv4_when_v4_mapped_and_never_when_loopback() {
        let routes = [p("10.0.0.0/8"), p("10.1.0.0/16"), Prefix::Default];
        assert_eq!(peer_match(&routes, ip("::ffff:10.1.0.9")), Some(1));
        assert_eq!(peer_match(&routes, ip("10.2.0.9")), Some(0));
        assert_eq!(peer_match(&routes, ip("192.0.2.1")), Some(2));
        assert_eq!(peer_match(&routes, ip("127.0.0.1")), None);
        assert_eq!(peer_match(&routes, ip("::ffff:127.0.0.1")), None);
        assert_eq!(peer_match(&routes, ip("::1")), None);
        assert_eq!(canonical(ip("::1")), ip("::1"));
    }
}
