# iwlab — `make run` and `make test` do all set-up on a fresh Debian machine (as root):
# a virtualenv in .venv with the Python dependencies and the Rust extension built by maturin.
SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export CARGO_TERM_COLOR ?= never

.PHONY: run test deps deps-rust deps-browser deps-tools ext test-rust test-python bench lint clean

## run: set up, reproduce RFC 2415 in quick mode (3 seeds, short runs): tables + out/rfc2415/report.html
run: ext
	$(VENV)/bin/iwlab reproduce rfc2415 --quick --out out/rfc2415

## test: set up, then run every test
test: ext test-rust test-python

deps-rust:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust stable (rustup)"; exit 1; }

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { apt-get update && apt-get install -y --no-install-recommends python3 python3-venv; }
	$(PYTHON) -m venv $(VENV) || { apt-get update && apt-get install -y --no-install-recommends python3-venv && $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.7,<2"
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

deps: deps-rust $(STAMP)

## ext: (re)build the Rust extension into the virtualenv
ext: deps
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q

test-rust: deps-rust deps-tools
	$(CARGO) test -p iwlab-core -p iwlab-link

test-python: ext deps-browser
	$(PY) -m pytest -q

## deps-tools: tshark, which the pcap tests use to decode traces (Debian package; skipped if present)
deps-tools:
	@command -v tshark >/dev/null || { export DEBIAN_FRONTEND=noninteractive; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends tshark; } \
	  || echo "tshark could not be installed: pcap decode checks will be skipped"

## deps-browser: headless Chromium for the report's browser test (Debian package; skipped if present)
deps-browser:
	@command -v chromium >/dev/null || { export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends chromium fonts-ipafont-gothic; } \
	  || echo "chromium could not be installed: the browser test will be skipped"

## bench: criterion micro and scenario benchmarks of the engine
bench: deps-rust
	$(CARGO) bench -p iwlab-core

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy -p iwlab-core --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf out $(VENV)
