# `make test` and `make demo` each create .venv when missing and install kenaz into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-examples

.PHONY: test demo docs check-site lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Install kenaz editable with the extra $(1): through uv, which pip installs into the venv and
# which takes a third less time than pip for the dev extra (bytecode compiled, as pip does);
# through pip alone if uv cannot be installed or run.
define install
	( $(BIN)/python -m pip install --quiet uv \
	  && $(BIN)/python -m uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[$(1)]' ) \
	|| $(BIN)/python -m pip install --quiet -e '.[$(1)]'
endef

$(STAMP): $(BIN)/python pyproject.toml
	$(call install,dev)
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

# The documentation site, into site/: strict, so a warning, a broken link or an example that
# raises fails it (tests/test_docs_site.py builds it the same way in `make test`).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

# Open every page of the built site in headless Chromium (Debian: apt-get install chromium)
# and fail on a page that does not load or logs a console error.
check-site: docs
	$(BIN)/python scripts/check_site.py site

# The tour needs only the `examples` extra (tqdm, matplotlib, scikit-learn), not the dev tools.
$(DEMO_STAMP): $(BIN)/python pyproject.toml
	$(call install,examples)
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python examples/tour.py

# `make bench` uses its own venv: kenaz plus the optional peers, each installed on its own so
# that one failing install leaves the others (a missing peer's rows then say "not installed").
# torch is pinned to 2.13.0: a CPU wheel of it lies on this machine's disk; any other version
# downloads gigabytes of CUDA. Delete .venv-bench/.installed to retry a failed peer.
BENCH_VENV := .venv-bench
BENCH_BIN := $(BENCH_VENV)/bin
BENCH_STAMP := $(BENCH_VENV)/.installed
BENCH_PEERS := autograd torch==2.13.0 'jax jaxlib'

$(BENCH_BIN)/python:
	$(PYTHON) -m venv $(BENCH_VENV)

$(BENCH_STAMP): $(BENCH_BIN)/python pyproject.toml
	$(BENCH_BIN)/python -m pip install --quiet --upgrade pip
	$(BENCH_BIN)/python -m pip install --quiet -e '.[jit]'
	@for peer in $(BENCH_PEERS); do \
		$(BENCH_BIN)/python -m pip install --quiet $$peer \
			|| echo "make bench: could not install $$peer; its rows will say so"; \
	done
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BENCH_BIN)/python benchmarks/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples scripts

clean:
	rm -rf $(VENV) build dist site src/*.egg-info .pytest_cache .mypy_cache
