#!/usr/bin/env bash
# `make ext`: the extension built with profile-guided optimisation (bench/README.md, "Fourth
# pass: profile-guided build"). 1. an instrumented build (target/pgo-gen); 2. the training run,
# bench/pgo/train.py, through that build; 3. llvm-profdata merges the counters; 4. the optimised
# build, installed into the virtualenv by maturin. Steps 2-3 are skipped while the instrumented
# build is older than the profile (cargo found nothing to rebuild in step 1). Without llvm-profdata
# (rustup's llvm-tools, added here when rustup is present) it is the plain release build, with one
# line saying so; IWLAB_PGO=0 asks for the plain build.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="$(cd "${VENV:-.venv}" && pwd)"
develop() { VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --release -q; }

profdata="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"
if [ "${IWLAB_PGO:-1}" != 0 ] && [ ! -x "$profdata" ] && command -v rustup >/dev/null; then
  rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ "${IWLAB_PGO:-1}" = 0 ] || [ ! -x "$profdata" ]; then
  [ "${IWLAB_PGO:-1}" = 0 ] || echo "make ext: no llvm-profdata in rustc's sysroot (rustup component add llvm-tools did not provide it): plain build, without profile-guided optimisation"
  develop
  exit
fi

pgo="$PWD/target/pgo"
instrumented="$PWD/target/pgo-gen/release/lib_core.so"
# The package and features maturin builds (pyproject's [tool.maturin]), with counters compiled in.
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$pgo/raw" CARGO_TARGET_DIR="$PWD/target/pgo-gen" \
  PYO3_PYTHON="$venv/bin/python" cargo build --release -q -p iwlab-py --features pyo3/extension-module
if [ ! -f "$pgo/merged.profdata" ] || [ "$instrumented" -nt "$pgo/merged.profdata" ]; then
  rm -rf "$pgo/raw"
  mkdir -p "$pgo/raw"
  so="$(ls python/iwlab/_core*.so 2>/dev/null | head -n 1 || true)"  # none yet on a fresh clone
  cp "$instrumented" "${so:-python/iwlab/_core.abi3.so}"  # where the editable install loads the extension from; step 4 replaces it
  # the package from this tree: on a fresh clone nothing is installed in the virtualenv yet
  PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$venv/bin/python" bench/pgo/train.py
  "$profdata" merge -o "$pgo/merged.profdata" "$pgo/raw"
fi
# -Cprofile-use: the functions' counters steer inlining, block layout and register allocation.
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$pgo/merged.profdata" develop
