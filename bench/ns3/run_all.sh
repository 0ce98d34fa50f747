#!/usr/bin/env bash
# Runs every measured ns-3 configuration once, one after another, and prints for each the load
# average before it, the command, its JSON line and its outside wall time (/usr/bin/time -f %e
# when present, else bash's SECONDS). Build first: make -C bench/ns3.
#
#   bench/ns3/run_all.sh [smoke|full]    # smoke: every program for 1 s; full (default): all runs
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-full}"

run() {
  echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "\$ bench/ns3/$*"
  local start end
  start=$(date +%s.%N)
  "./$@"
  end=$(date +%s.%N)
  echo "# process wall time: $(awk "BEGIN { printf \"%.2f\", $end - $start }") s"
}

case "$mode" in
  smoke)
    run build/bulk --duration 1
    run build/short_flows --duration 1
    run build/rfc2415 --duration 1
    ;;
  full)
    run build/bulk
    run build/bulk --weakEs 0
    run build/bulk --flows 1000 --bottleneckMbps 1000 --duration 10
    run build/bulk --flows 1000 --bottleneckMbps 1000 --duration 10 --weakEs 0
    run build/short_flows --iw 10
    run build/short_flows --iw 3
    run build/rfc2415
    ;;
  *)
    echo "usage: $0 [smoke|full]" >&2
    exit 2
    ;;
esac
