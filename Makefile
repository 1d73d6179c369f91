# The README's two commands: `make reproduce` (the main job) and `make test` (the tests); `make study` runs the
# method study. Each creates .venv/ with Python 3.11 and installs the package with its dev extras first (the jobs
# also install the peer solvers their benchmarks compare with).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# the profile of the jobs: PROFILE=..., else $HYBRID_NBS_PROFILE, else laptop
PROFILE ?= $(or $(HYBRID_NBS_PROFILE),laptop)
# lanes: JOBS=1 runs one task at a time (the same results, later); default: the machine's cores, capped by memory
JOBS_FLAG := $(if $(JOBS),--jobs $(JOBS))

.PHONY: reproduce study test docs bench install

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] >= (3, 11), "hybrid_nbs needs Python >= 3.11"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

$(BIN)/.installed-peers: $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -e ".[dev,peers]"
	touch $@

install: $(BIN)/.installed

reproduce: $(BIN)/.installed-peers
	$(BIN)/hnwm reproduce --profile $(PROFILE) $(JOBS_FLAG)

study: $(BIN)/.installed-peers
	$(BIN)/hnwm study --profile $(PROFILE) $(JOBS_FLAG)

# Chromium checks the rendered docs; it comes from Debian's packages when we are root and it is missing.
test: $(BIN)/.installed
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; } || \
	  echo "chromium not installed: the docs browser test will be skipped"
	HYBRID_NBS_PROFILE=smoke $(BIN)/python -m pytest --runslow --durations=25

# The docs site is built by a development tool of the checkout (tools/ is not part of the package); same as `hnwm docs`.
docs: $(BIN)/.installed
	$(BIN)/python tools/docs.py

bench: $(BIN)/.installed-peers
	$(BIN)/hnwm bench solvers --profile $(PROFILE)
