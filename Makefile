# The README's commands. Everything runs inside .venv, created (with pip) on first use.
#   make quick   set up, then run the quick preset end to end (results/quick/)
#   make test    set up, then run the whole test suite (the smoke workflow included)
#   make paper   the paper's grid (results/paper/); make smoke: the CI preset (results/smoke/)
#   make results-page   docs/results.md from a finished quick run (figures/quick/), stamped with the commit
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CORES  ?= all
# MAX_DATASETS=N: at most N datasets per experiment (the config key max_datasets), for a shorter run.
MAX_DATASETS ?=
DATASETS_CAP := $(if $(MAX_DATASETS),--config max_datasets=$(MAX_DATASETS))
SNAKEMAKE := $(BIN)/snakemake --cores $(CORES) $(DATASETS_CAP)

export JAX_COMPILATION_CACHE_DIR ?= $(CURDIR)/.jax_cache
export JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS ?= 0

.PHONY: setup quick smoke paper test lint clean results-page

setup: $(STAMP)

$(STAMP): pyproject.toml baselines/pyproject.toml requirements-nodeps.txt
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) not found: install Python 3.11 or run make PYTHON=/path/to/python3.11" >&2; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[workflow,realdata,test,lint]' -e 'baselines[all]'
	# What installs without its dependencies: dibs-lib (baselines/dibs/requirements-nodeps.txt) and cdt,
	# a data source only (requirements-nodeps.txt).
	for requirements in requirements-nodeps.txt baselines/*/requirements-nodeps.txt; do \
	  $(BIN)/python -m pip install --quiet --no-deps -r $$requirements || exit 1; \
	done
	touch $(STAMP)

quick: $(STAMP)
	$(SNAKEMAKE) --configfile config/quick.yaml
	$(BIN)/snakemake --configfile config/quick.yaml $(DATASETS_CAP) --report figures/quick/report.html

smoke: $(STAMP)
	$(SNAKEMAKE) --configfile config/smoke.yaml

paper: $(STAMP)
	$(SNAKEMAKE)
	$(BIN)/snakemake $(DATASETS_CAP) --report figures/report.html

# --durations: the 25 slowest tests, listed before the summary line (where the suite's time goes).
test: $(STAMP)
	$(BIN)/python -m pytest -q --durations=25

# docs/results.md and docs/results/*.png from a finished quick run (benchmarks/results_page.py).
results-page: $(STAMP)
	$(BIN)/python benchmarks/results_page.py --figures figures/quick --results results/quick --out docs/results.md

# snakemake --lint for each preset, then the formatters in check mode (nothing is rewritten) and
# ruff's linter; the tools are the `lint` extra, settings in pyproject.toml ([tool.snakefmt], [tool.ruff]).
lint: $(STAMP)
	for preset in config/config.yaml config/quick.yaml config/smoke.yaml; do \
	  $(BIN)/snakemake --lint --configfile $$preset || exit 1; \
	done
	$(BIN)/snakefmt --check --diff Snakefile workflow/rules
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

clean:
	rm -rf results figures .snakemake
