# iwlab — `make run` and `make test` do all set-up on a fresh Debian machine (as root):
# a virtualenv in .venv with the Python dependencies (pyproject.toml's, read by the deps step;
# pip's editable install would build the extension a first time, without the profile) and the
# package with its Rust extension, installed by `maturin develop` in `make ext`.
#
# Set-up steps print one line each; what they print goes to $(VENV)/log/STEP.log, shown (its
# last lines) when the step fails. VERBOSE=1 shows everything as it runs.
SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LOG := $(VENV)/log
# The extension is built again only when one of its sources (the crates it is made of, the
# lock file, the build script) is newer than this stamp, or when it is missing.
EXT_STAMP := $(VENV)/.ext-built
EXT_SRC := $(shell find crates/iwlab-core crates/iwlab-conform crates/iwlab-py -type f 2>/dev/null) \
  Cargo.toml Cargo.lock pyproject.toml bench/pgo/ext.sh bench/pgo/train.py
ifeq ($(wildcard python/iwlab/_core*.so),)
  $(shell rm -f $(EXT_STAMP))
endif
# where `make install` puts the `iwlab` command: /usr/local/bin for root, else ~/.local/bin
BINDIR ?= $(if $(filter 0,$(shell id -u)),/usr/local/bin,$(HOME)/.local/bin)
# `make test` checks behaviour, which profile-guided optimisation does not change: it builds the
# plain release extension (one build instead of an instrumented one, a training run and a second
# build) unless IWLAB_PGO is given. Either build satisfies the stamp, so `make run` after
# `make test` does not build again.
ifneq ($(filter test test-builds test-python,$(MAKECMDGOALS)),)
  IWLAB_PGO ?= 0
endif
export IWLAB_PGO
export CARGO_TERM_COLOR ?= never
# CI builds from a fresh clone, where incremental compilation saves nothing (and an lld link of
# the QUIC feature failed once from a stale incremental cache).
export CARGO_INCREMENTAL ?= 0
comma := ,

# $(call step,NAME,WHAT,COMMANDS): one line "NAME: WHAT"; the output of COMMANDS to
# $(LOG)/NAME.log, its last 200 lines and the log's path on failure.
ifeq ($(VERBOSE),1)
step = @echo "$(1): $(2)"; $(3)
else
step = @mkdir -p $(LOG); echo "$(1): $(2)"; { $(3); } > $(LOG)/$(1).log 2>&1 || \
  { tail -n 200 $(LOG)/$(1).log; echo "$(1): FAILED (whole log: $(LOG)/$(1).log)"; exit 1; }
endif

.PHONY: run test test-builds deps deps-rust deps-browser deps-tools deps-bpf deps-probe tools bpf quic-peer ext install rust-tests test-rust test-python bench bench-engine ns3 ns3-deps ns3-programs lint clean

## run: set up, reproduce RFC 2415 in quick mode (5 seeds, short runs): tables + out/rfc2415/report.html
run: ext
	@echo "run: iwlab reproduce rfc2415 --quick --brief --out out/rfc2415 (the ledger and tables: the report)"
	@$(VENV)/bin/iwlab reproduce rfc2415 --quick --brief --out out/rfc2415

## install: put `iwlab` on PATH (a link to $(VENV)/bin/iwlab in $(BINDIR); BINDIR=DIR for another)
install: ext
	@mkdir -p $(BINDIR)
	@ln -sf $(abspath $(VENV)/bin/iwlab) $(BINDIR)/iwlab
	@echo "install: $(BINDIR)/iwlab -> $(abspath $(VENV)/bin/iwlab)"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "install: $(BINDIR) is not on PATH; add it (e.g. export PATH=\"$(BINDIR):\$$PATH\")";; esac

## test: set up, then run every test. The builds run two at a time (the extension's link-time
## pass holds one core for minutes; the helper programs and the Rust tests build on the other),
## then the Rust tests and pytest (two workers) run one after the other, alone.
test:
	@$(MAKE) --no-print-directory -j2 test-builds
	@$(MAKE) --no-print-directory -j1 test-rust test-python

# deps-bpf first: the tools' build needs clang; the apt steps wait for each other ($(call apt)).
test-builds: deps-bpf ext tools rust-tests deps-tools deps-probe deps-browser ns3-programs

deps-rust:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust stable (rustup)"; exit 1; }

$(STAMP): pyproject.toml
	$(call step,deps,Python virtualenv $(VENV) and the dependencies of pyproject.toml,\
	  { command -v $(PYTHON) || { $(APT_LOCK) apt-get update && $(APT_LOCK) apt-get install -y --no-install-recommends python3 python3-venv; }; } && \
	  { $(PYTHON) -m venv $(VENV) || { $(APT_LOCK) apt-get update && $(APT_LOCK) apt-get install -y --no-install-recommends python3-venv && $(PYTHON) -m venv $(VENV); }; } && \
	  $(PY) -m pip install -q --upgrade pip && \
	  $(PY) -m pip install -q "maturin>=1.7$(comma)<2" && \
	  $(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	    print("\n".join(p["dependencies"] + p["optional-dependencies"]["test"]))' > $(VENV)/requirements.txt && \
	  $(PY) -m pip install -q -r $(VENV)/requirements.txt)
	@touch $(STAMP)

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
ext: $(EXT_STAMP)
	@$(PY) -m compileall -q python/iwlab >/dev/null

$(EXT_STAMP): $(EXT_SRC) | deps
	$(call step,ext,building the Rust extension (release$(if $(filter 0,$(IWLAB_PGO)),,$(comma) profile-guided)),\
	  VENV=$(VENV) bash bench/pgo/ext.sh)
	@touch $(EXT_STAMP)

# The Rust tests: iwlab-core, iwlab-prefix, iwlab-link and iwlab-conform in the test profile; iwlab-bpf in the
# tools profile, whose compiled dependencies it shares with `make tools`.
RUST_TESTS := $(CARGO) test -q -p iwlab-core -p iwlab-prefix -p iwlab-link -p iwlab-conform && \
  $(CARGO) test -q --profile tools -p iwlab-bpf

## rust-tests: compile the Rust tests without running them (`make test` builds them beside the extension)
rust-tests: deps-rust deps-bpf
	$(call step,rust-tests,cargo test --no-run (the Rust tests' build),\
	  $(subst test -q,test -q --no-run,$(RUST_TESTS)))

test-rust: deps-rust deps-tools deps-bpf
	$(call step,test-rust,cargo test -p iwlab-core -p iwlab-prefix -p iwlab-link -p iwlab-conform; --profile tools -p iwlab-bpf,\
	  $(RUST_TESTS))
	@[ ! -f $(LOG)/test-rust.log ] || awk '/^test result:/ {p += $$4; f += $$6; i += $$8} \
	  END {printf "test-rust: %d passed, %d failed, %d ignored\n", p, f, i}' $(LOG)/test-rust.log

# Two pytest-xdist workers: the kernel tests run one after the other on one of them (their group,
# tests/conftest.py), mostly waiting on real time, while the simulations use both cores.
PYTEST_WORKERS ?= 2
test-python: ext deps-browser
	@echo "test-python: pytest -n $(PYTEST_WORKERS) --dist loadgroup"
	@$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

# $(call apt,NAME,PACKAGES,WHAT IS SKIPPED): apt-get install PACKAGES quietly (log in
# $(LOG)/NAME.log); if that fails, one line saying so and what is skipped (never an error).
# Under `make -j2` one apt step waits for another through APT_LOCK (flock, util-linux) instead of
# failing on dpkg's lock.
APT_LOCK = flock $(LOG)/.apt.lock
apt = mkdir -p $(LOG); echo "$(1): apt-get install $(2)"; \
  { export DEBIAN_FRONTEND=noninteractive; $(APT_LOCK) apt-get update -q && $(APT_LOCK) apt-get install -y -q --no-install-recommends $(2); } \
  > $(LOG)/$(1).log 2>&1 || echo "$(1): $(2) could not be installed (log: $(LOG)/$(1).log): $(3)"

## deps-tools: tshark, which the pcap tests use to decode traces (Debian package; skipped if present)
deps-tools:
	@command -v tshark >/dev/null || { \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  $(call apt,deps-tools,tshark,pcap decode checks will be skipped); }

## deps-bpf: clang and libbpf's headers to compile the per-flow IW eBPF programs, bpftool for the
## tests' leak checks (Debian packages; skipped if present; `make bpf` fails without them)
deps-bpf:
	@{ command -v clang && [ -f /usr/include/bpf/bpf_helpers.h ] && { command -v bpftool || [ -x /usr/sbin/bpftool ]; }; } >/dev/null || \
	  { $(call apt,deps-bpf,clang libbpf-dev bpftool,the eBPF programs cannot be built); }

## deps-probe: nftables, whose rule keeps the kernel from resetting `iwlab probe`'s user-space
## connections (Debian package; skipped if present; the probe tests skip without it)
deps-probe:
	@{ command -v nft || [ -x /usr/sbin/nft ]; } >/dev/null || \
	  { $(call apt,deps-probe,nftables,tests/test_probe_netns.py will be skipped); }

## tools: build the helper programs into target/tools (Cargo.toml's tools profile), in one cargo
## run: iwlab-link (the emulator's relay), iwlab-quic-peer and iwlab-bpf (below)
tools: deps-rust deps-bpf
	$(call step,tools,cargo build --profile tools -p iwlab-link -p iwlab-quic-peer -p iwlab-bpf,\
	  $(CARGO) build --profile tools -p iwlab-link -p iwlab-quic-peer -p iwlab-bpf)

## bpf: build iwlab-bpf (crates/iwlab-bpf: the eBPF programs and their loader) into target/tools
bpf: deps-rust deps-bpf
	$(call step,bpf,cargo build --profile tools -p iwlab-bpf,$(CARGO) build --profile tools -p iwlab-bpf)

## quic-peer: build iwlab-quic-peer (crates/iwlab-quic-peer: quinn on the kernel's UDP, the
## emulator's `--quic-stack quinn`) into target/tools
quic-peer: deps-rust
	$(call step,quic-peer,cargo build --profile tools -p iwlab-quic-peer,$(CARGO) build --profile tools -p iwlab-quic-peer)

## deps-browser: headless Chromium for the report's browser test (Debian package; skipped if present)
deps-browser:
	@command -v chromium >/dev/null || { $(call apt,deps-browser,chromium fonts-ipafont-gothic,the browser test will be skipped); }

## ns3-deps: Debian's libns3-dev, g++, make (seconds; as root). Without them the ns-3 smoke test
## (tests/test_bench_smoke.py) is skipped, so a failure here does not stop `make test`.
ns3-deps:
	@mkdir -p $(LOG); { $(APT_LOCK) bash bench/install-ns3.sh > $(LOG)/ns3-deps.log 2>&1 && \
	  echo "ns3-deps: ns-3 ready (log: $(LOG)/ns3-deps.log)"; } || \
	  echo "ns3-deps: libns3-dev could not be installed (log: $(LOG)/ns3-deps.log); tests/test_bench_smoke.py will be skipped"

## ns3-programs: the benchmark's ns-3 programs in bench/ns3/build, built by `make test` beside the
## Rust builds (tests/test_bench_smoke.py runs `make -C bench/ns3` again: up to date, it builds nothing)
ns3-programs: ns3-deps
	@{ $(MAKE) -s -C bench/ns3 > $(LOG)/ns3-programs.log 2>&1 && echo "ns3-programs: bench/ns3/build"; } || \
	  echo "ns3-programs: not built (log: $(LOG)/ns3-programs.log); tests/test_bench_smoke.py builds them or says why"

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
