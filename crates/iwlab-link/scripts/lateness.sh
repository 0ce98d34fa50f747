#!/usr/bin/env bash
# Measures the relay's lateness under a TCP flood: builds client/router/server namespaces
# (prefix iwlk-meas-<pid>-) wired as in the README, runs iwlab-link in the router, floods
# client→server with one TCP connection for SECONDS, prints the stats JSON and removes
# everything (also on failure). Needs root, /dev/net/tun, ip netns, python3.
#
#   crates/iwlab-link/scripts/lateness.sh [RATE=100Mbps] [DELAY=25ms] [SECONDS=5]
# Environment: IWLAB_LINK_BIN (default target/release/iwlab-link), RELAY_EXTRA (more relay
# flags, e.g. "--cpu 1 --queue codel"), ENDPOINT_WRAP (prefix for the endpoints, e.g. "taskset -c 0").
set -euo pipefail
RATE=${1:-100Mbps}; DELAY=${2:-25ms}; SECS=${3:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${IWLAB_LINK_BIN:-$HERE/../../../target/release/iwlab-link}
P="iwlk-meas-$$-"; C=${P}cli; R=${P}rtr; S=${P}srv
STATS=$(mktemp /tmp/iwlk-meas-XXXXXX.json)
RELAY=
cleanup() {
  [ -n "$RELAY" ] && kill -TERM "$RELAY" 2>/dev/null && wait "$RELAY" 2>/dev/null || true
  for ns in "$S" "$R" "$C"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -f "$STATS"
}
trap cleanup EXIT

for ns in "$C" "$R" "$S"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
  net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$C" link add cr type veth peer name rc netns "$R"
ip -n "$S" link add sr type veth peer name rs netns "$R"
ip -n "$C" addr add 198.18.1.1/24 dev cr;   ip -n "$C" link set cr up
ip -n "$R" addr add 198.18.1.254/24 dev rc; ip -n "$R" link set rc up
ip -n "$R" addr add 198.18.2.254/24 dev rs; ip -n "$R" link set rs up
ip -n "$S" addr add 198.18.2.1/24 dev sr;   ip -n "$S" link set sr up
ip -n "$C" route add default via 198.18.1.254
ip -n "$S" route add default via 198.18.2.254
for spec in "tcs rc 101" "tsc rs 102"; do
  set -- $spec
  ip -n "$R" tuntap add dev "$1" mode tun
  ip -n "$R" link set "$1" up
  ip -n "$R" route add default dev "$1" table "$3"
  ip -n "$R" rule add iif "$2" lookup "$3" pref "$3"
done

ip netns exec "$R" "$BIN" --tun tcs --tun tsc --rate "$RATE" --delay "$DELAY" --stats-json "$STATS" ${RELAY_EXTRA:-} &
RELAY=$!
sleep 0.3
ip netns exec "$S" ${ENDPOINT_WRAP:-} python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.2.1", 5001)); s.listen(1); c, _ = s.accept()
n = 0
while True:
    b = c.recv(1 << 16)
    if not b: break
    n += len(b)
print(f"server received {n} bytes")' &
SERVER=$!
sleep 0.3
ip netns exec "$C" ${ENDPOINT_WRAP:-} python3 -c '
import socket, time, sys
secs = float(sys.argv[1])
c = socket.create_connection(("198.18.2.1", 5001)); buf = b"x" * (1 << 16); t0 = time.time(); n = 0
while time.time() - t0 < secs:
    n += c.send(buf)
c.close(); dt = time.time() - t0
print(f"client sent {n} bytes in {dt:.2f} s = {n * 8 / dt / 1e6:.2f} Mb/s")' "$SECS"
wait "$SERVER"
kill -TERM "$RELAY"; wait "$RELAY" || true; RELAY=
cat "$STATS"
