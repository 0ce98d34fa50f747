# iwlab — `make run` and `make test` do all set-up on a fresh Debian machine (as root):
# a virtualenv in .venv with the Python dependencies (pyproject.toml's, read by the deps step;
# pip's editable install would build the extension a first time, without the profile) and the
# package with its Rust extension, installed by `maturin develop` in `make ext`.
SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export CARGO_TERM_COLOR ?= never

.PHONY: run test deps deps-rust deps-browser deps-tools deps-bpf deps-probe bpf ext test-rust test-python bench bench-engine ns3 ns3-deps lint clean

## run: set up, reproduce RFC 2415 in quick mode (3 seeds, short runs): tables + out/rfc2415/report.html
run: ext
	$(VENV)/bin/iwlab reproduce rfc2415 --quick --out out/rfc2415

## test: set up, then run every test
test: ext ns3-deps bpf deps-probe test-rust test-python

deps-rust:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust stable (rustup)"; exit 1; }

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { apt-get update && apt-get install -y --no-install-recommends python3 python3-venv; }
	$(PYTHON) -m venv $(VENV) || { apt-get update && apt-get install -y --no-install-recommends python3-venv && $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.7,<2"
	$(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	  print("\n".join(p["dependencies"] + p["optional-dependencies"]["test"]))' > $(VENV)/requirements.txt
	$(PY) -m pip install -q -r $(VENV)/requirements.txt
	touch $(STAMP)

deps: deps-rust $(STAMP)

## ext: (re)build the Rust extension into the virtualenv
# It also compiles python/iwlab's bytecode: the editable install leaves none, and where
# PYTHONDONTWRITEBYTECODE is set the interpreter never writes it, so every command compiled the
# modules it imports again (0.1-0.2 s of `iwlab run`; bench/README.md, "Second pass: bytecode
# and the command tree").
#
# The build is profile-guided (bench/pgo/ext.sh; bench/README.md, "Fourth pass: profile-guided
# build"): an instrumented build runs bench/pgo/train.py, then the optimised build uses its
# counters. It needs rustup's llvm-tools (added by the script); without them, or with
# IWLAB_PGO=0, it is the plain release build.
ext: deps
	VENV=$(VENV) bash bench/pgo/ext.sh
	$(PY) -m compileall -q python/iwlab >/dev/null

test-rust: deps-rust deps-tools deps-bpf
	$(CARGO) test -p iwlab-core -p iwlab-link -p iwlab-conform
	$(CARGO) test --release -p iwlab-bpf  # header layouts, the evidence reader's per-prefix sums

test-python: ext deps-browser
	$(PY) -m pytest -q

## deps-tools: tshark, which the pcap tests use to decode traces (Debian package; skipped if present)
deps-tools:
	@command -v tshark >/dev/null || { export DEBIAN_FRONTEND=noninteractive; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends tshark; } \
	  || echo "tshark could not be installed: pcap decode checks will be skipped"

## deps-bpf: clang and libbpf's headers to compile the per-flow IW eBPF programs, bpftool for the
## tests' leak checks (Debian packages; skipped if present)
deps-bpf:
	@{ command -v clang && [ -f /usr/include/bpf/bpf_helpers.h ] && { command -v bpftool || [ -x /usr/sbin/bpftool ]; }; } >/dev/null || \
	  { export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get install -y -q --no-install-recommends clang libbpf-dev bpftool; }

## deps-probe: nftables, whose rule keeps the kernel from resetting `iwlab probe`'s user-space
## connections (Debian package; skipped if present; the probe tests skip without it)
deps-probe:
	@{ command -v nft || [ -x /usr/sbin/nft ]; } >/dev/null || { export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends nftables; } \
	  || echo "nftables could not be installed: tests/test_probe_netns.py will be skipped"

## bpf: build iwlab-bpf (crates/iwlab-bpf: the eBPF programs and their loader) into target/release
bpf: deps-rust deps-bpf
	$(CARGO) build --release -p iwlab-bpf

## deps-browser: headless Chromium for the report's browser test (Debian package; skipped if present)
deps-browser:
	@command -v chromium >/dev/null || { export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends chromium fonts-ipafont-gothic; } \
	  || echo "chromium could not be installed: the browser test will be skipped"

## ns3-deps: Debian's libns3-dev, g++, make (seconds; as root). Without them the ns-3 smoke test
## (tests/test_bench_smoke.py) is skipped, so a failure here does not stop `make test`.
ns3-deps:
	@bash bench/install-ns3.sh || echo "ns3-deps: libns3-dev could not be installed; tests/test_bench_smoke.py will be skipped"

## ns3: install ns-3 and build the benchmark programs in bench/ns3/build
ns3:
	bash bench/install-ns3.sh
	$(MAKE) -C bench/ns3

## bench: iwlab vs ns-3 side by side: builds both, runs bench/run.py, writes
## bench/results.json. Options through BENCH_ARGS, e.g. make bench BENCH_ARGS="--quick --only A"
bench: ns3 ext
	$(PY) bench/run.py $(BENCH_ARGS)

## bench-engine: criterion micro and scenario benchmarks of the engine
bench-engine: deps-rust
	$(CARGO) bench -p iwlab-core

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy -p iwlab-core --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf out $(VENV)
