# The README's two commands: `make reproduce` (the main job) and `make test` (the tests).
# Each creates .venv/ with Python 3.11 and installs the package with its dev extras first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= laptop

.PHONY: reproduce test docs bench install

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] >= (3, 11), "hybrid_nbs needs Python >= 3.11"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

install: $(BIN)/.installed

reproduce: $(BIN)/.installed
	$(BIN)/hnwm reproduce --profile $(PROFILE)

# Chromium checks the rendered docs; it comes from Debian's packages when we are root and it is missing.
test: $(BIN)/.installed
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; } || \
	  echo "chromium not installed: the docs browser test will be skipped"
	HYBRID_NBS_PROFILE=smoke $(BIN)/python -m pytest

# The docs site is built by a development tool of the checkout (tools/ is not part of the package); same as `hnwm docs`.
docs: $(BIN)/.installed
	$(BIN)/python tools/docs.py

bench: $(BIN)/.installed
	$(BIN)/hnwm bench solvers --profile $(PROFILE)
