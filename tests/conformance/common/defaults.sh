#!/bin/sh
# The settings every script of this corpus starts from: Linux 6.x defaults, written out so a
# run on a real kernel does not depend on the machine's own sysctls. iwlab conform models
# the tcp_* lines it knows (docs/conformance.md) and reports the others as ignored.
# The congestion control is set per socket in each script (TCP_CONGESTION "cubic"): a new
# network namespace may refuse the sysctl (cubic not in the root's allowed list).

# Receive buffer: with this maximum Linux announces wscale 8 (tcp_select_initial_window).
sysctl -q net.ipv4.tcp_rmem="4096 540000 15728640"
sysctl -q net.ipv4.tcp_timestamps=1
sysctl -q net.ipv4.tcp_sack=1
sysctl -q net.ipv4.tcp_reordering=3
sysctl -q net.ipv4.tcp_recovery=1
sysctl -q net.ipv4.tcp_early_retrans=3
sysctl -q net.ipv4.tcp_frto=2
sysctl -q net.ipv4.tcp_slow_start_after_idle=1
sysctl -q net.ipv4.tcp_ecn=0
