#!/usr/bin/env bash
# Installs what `iwlab emulate` and its netns tests need besides iproute2, idempotently:
# tcpdump (first-flight captures) and ethtool (TSO/GSO off so a capture counts real segments).
# Debian/Ubuntu, as root. Prints nothing and exits 0 when everything is already there.
set -euo pipefail
need=()
command -v tcpdump >/dev/null 2>&1 || [ -x /usr/bin/tcpdump ] || need+=(tcpdump)
command -v ethtool >/dev/null 2>&1 || [ -x /usr/sbin/ethtool ] || need+=(ethtool)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: missing ${need[*]}; run as root to install them" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "setup.sh: installed ${need[*]}"
