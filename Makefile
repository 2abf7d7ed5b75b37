# ccbench — every entry point a user or CI needs. `make demo` and `make test` work on a fresh
# machine: they install what is missing (Debian packages, the Python venv, the Rust build).
SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
PIP   := $(VENV)/bin/pip
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(HOME)/.cargo/bin:$(PATH)

.PHONY: all install ns3 system-deps build demo test lint test-rust test-python bench clean

all: build

# Debian packages: iperf3 drives real kernel TCP in the kernel backend; tcpdump takes the
# sender-side captures of `[output] pcap` on the kernel backend and of `ccbench capture`;
# iproute2 builds namespaces; chromium (+ its driver) renders the HTML report in the report test;
# clang, bpftool and libbpf-dev build the BPF ports of congestion controls the kernel lacks (backends/kernel/bpf).
system-deps:
	@need=""; \
	command -v iperf3 >/dev/null || need="$$need iperf3"; \
	command -v tcpdump >/dev/null || need="$$need tcpdump"; \
	command -v ip >/dev/null || need="$$need iproute2"; \
	command -v ping >/dev/null || need="$$need iputils-ping"; \
	command -v ethtool >/dev/null || need="$$need ethtool"; \
	command -v chromium >/dev/null || need="$$need chromium"; \
	command -v chromedriver >/dev/null || need="$$need chromium-driver"; \
	command -v clang >/dev/null || need="$$need clang"; \
	command -v bpftool >/dev/null || need="$$need bpftool"; \
	[ -e /usr/include/bpf/bpf_helpers.h ] || need="$$need libbpf-dev"; \
	if [ -n "$$need" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:$$need"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null) \
	      || echo "warning: could not install$$need (kernel backend / report rendering tests will be skipped)"; \
	  else echo "note: missing$$need (needed for the kernel backend and the report rendering test; install as root)"; fi; \
	fi

$(VENV)/.installed: pyproject.toml
	@command -v cargo >/dev/null || { echo "error: Rust (cargo) is required: https://rustup.rs"; exit 1; }
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PY) -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
	  print('\n'.join(p['dependencies'] + p['optional-dependencies']['dev']))" > $(VENV)/requirements.txt
	$(PIP) install -q -r $(VENV)/requirements.txt
	touch $@

# The ns-3 backend's SDK: the ns3 wheel pinned by the `ns3` extra, without its Python-binding
# dependencies (cppyy compiles for minutes; the backend uses the C++ SDK only). Part of `install`,
# so `make test` runs tests/ns3_backend/test_ns3.py.
$(VENV)/.ns3: $(VENV)/.installed
	$(PIP) install -q --no-deps "$$($(PY) -c "import tomllib; \
	  print(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['ns3'][0])")"
	touch $@

ns3: $(VENV)/.ns3

install: system-deps $(VENV)/.installed $(VENV)/.ns3

# Release build of the Rust extension into the venv (maturin; incremental, so cheap when nothing changed).
build: install
	$(VENV)/bin/maturin develop --release -q
	cargo build --release -q -p ccbench-link

demo: build
	$(VENV)/bin/ccbench demo

test: build lint test-rust test-python

# Lint (part of `make test`): ruff (configured in pyproject.toml) over the Python tree, rustfmt
# and clippy (warnings are errors) over the Rust workspace.
lint: install
	$(VENV)/bin/ruff check python tests benchmarks scripts
	$(VENV)/bin/ruff format --check python tests benchmarks scripts
	cargo fmt --all --check
	PYO3_PYTHON=$(abspath $(PY)) cargo clippy --workspace --all-targets --release -q -- -D warnings

test-rust:
	cargo test --release -p ccbench-sim -p ccbench-link -p ccbench-queue -p ccbench-wifi

test-python:
	$(PY) -m pytest -q -ra tests

bench: build
	$(PY) benchmarks/simulator/run_all.py

clean:
	rm -rf target $(VENV) .pytest_cache
