#!/usr/bin/env bash
# Install Debian's ns-3.37 development package and the C++ build tools the
# ns-3 side of the benchmark needs. Idempotent: does nothing when everything
# is already present. Run as root (uses apt-get).
set -euo pipefail

need=()
for pkg in libns3-dev g++ make; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    need+=("$pkg")
  fi
done

if [ "${#need[@]}" -eq 0 ]; then
  echo "install-ns3: libns3-dev, g++ and make already installed"
else
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-ns3: must run as root to install: ${need[*]}" >&2
    exit 1
  fi
  echo "install-ns3: installing ${need[*]}"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"
fi

# Sanity check: the headers and libraries bench/ns3/Makefile expects. Debian bookworm's
# libns3-dev 3.37 puts headers in /usr/include/ns3 and names the libraries libns3-<module>.so
# (a source build uses /usr/include/ns3.37 and libns3.37-<module>-*.so; the Makefile takes both).
if [ ! -f /usr/include/ns3/core-module.h ] && [ ! -f /usr/include/ns3.37/ns3/core-module.h ]; then
  echo "install-ns3: ns-3 headers not found" >&2
  exit 1
fi
if ! ls /usr/lib/x86_64-linux-gnu/libns3-core.so /usr/lib/x86_64-linux-gnu/libns3.37-core*.so >/dev/null 2>&1 \
   && ! compgen -G "/usr/lib/x86_64-linux-gnu/libns3*core*.so" >/dev/null; then
  echo "install-ns3: ns-3 core library not found" >&2
  exit 1
fi
echo "install-ns3: ns-3 $(dpkg-query -W -f='${Version}' libns3-dev) headers and libraries present"
