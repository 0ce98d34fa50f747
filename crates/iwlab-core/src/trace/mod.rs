//! Packet traces: a libpcap writer (Ethernet/IPv4/TCP/UDP frames) and a flow filter.

pub mod observer;
pub mod pcap;
