# iwlab — `make run` and `make test` do all set-up on a fresh Debian machine (as root).
SHELL := /bin/bash
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: run test deps-rust test-rust bench lint clean

## run: set up, run the headline study, write a report (out/report.html)
run: deps-rust
	$(CARGO) run --release -p iwlab-core --example rfc6928_table -- out/rfc6928-table.html

## test: set up, then run every test
test: deps-rust test-rust

deps-rust:
	@command -v $(CARGO) >/dev/null || { \
	  command -v rustup >/dev/null && rustup default stable || \
	  { apt-get update && apt-get install -y --no-install-recommends cargo rustc; }; }

test-rust:
	$(CARGO) test --workspace --release

## bench: criterion micro-benchmarks of the engine
bench: deps-rust
	$(CARGO) bench -p iwlab-core

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean:
	$(CARGO) clean
	rm -rf out
