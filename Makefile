# Two commands on a fresh machine:
#   make book   build the site (executes every notebook; cached, strict)
#   make test   unit/property tests, every notebook under nbval, hygiene checks, the strict site build,
#               then the browser tests on the built site (tests/browser: Chromium, skipped without it)
#   make lab   JupyterLab in the course environment, opened on labs/ (the explorers' widgets work there)
#   make test-colab  the labs, the graders and the explorer tests in a second venv with Colab's pins
# and, on a machine with an NVIDIA GPU:
#   make test-gpu  the test suite and every notebook, kernels compiled (e.g. PYTHON=python3 JOBS=12)
#   make bench  measure the kernels against a device-to-device copy; writes book/data/*.json
#               (bench/run.py; families and options in BENCH_ARGS, e.g. make bench BENCH_ARGS="softmax --quick")
#
# Each target installs what it needs into .venv (about a minute the first time). To use another
# interpreter that already has the requirements (e.g. a GPU box without network), pass PYTHON=python3.

SHELL := /bin/bash
VENV  := .venv
PYTHON ?= $(VENV)/bin/python
STAMP := $(VENV)/.installed
JOBS  ?= 2
# Where the site is built: $(BOOK_OUT)/_build/html (e.g. make book BOOK_OUT=/tmp/mysite for a private build).
BOOK_OUT ?= .
BUILD := $(BOOK_OUT)/_build
BENCH_ARGS ?=

.PHONY: book test test-gpu bench env clean strip lab test-colab

ifeq ($(PYTHON),$(VENV)/bin/python)
ENV_DEP := $(STAMP)
else
ENV_DEP :=
endif

$(STAMP): requirements.txt pyproject.toml
	@echo "==> installing the environment into $(VENV) (once)"
	python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
	set -o pipefail; $(VENV)/bin/python -m pip install -q -r requirements.txt 2>&1 | { grep -v '^WARNING: Location' || true; }
	set -o pipefail; $(VENV)/bin/python -m pip install -q --no-deps -e . 2>&1 | { grep -v '^WARNING: Location' || true; }
	touch $@

env: $(ENV_DEP)

# The execution cache is keyed on the notebooks' code only, so a change in lib/ or book/data would leave
# stale outputs on the site: drop the cache whenever their contents change.
LIB_HASH = $(shell find lib book/data -type f \( -name '*.py' -o -name '*.json' \) | LC_ALL=C sort | xargs cat | sha1sum | cut -c1-40)

# GPUPERF_EXPLORERS=static: explorers emit their precomputed figures (tools/sphinxext/gpuperf_site.py sets
# it too, for any jupyter-book build); that extension also copies MathJax into the site (no CDN).
book: $(ENV_DEP)
	@mkdir -p $(BUILD); if [ "$$(cat $(BUILD)/.lib-hash 2>/dev/null)" != "$(LIB_HASH)" ]; then rm -rf $(BUILD)/.jupyter_cache; fi
	GPUPERF_EXPLORERS=static $(PYTHON) -c "import sys; from jupyter_book.cli.main import main; sys.argv[0] = 'jupyter-book'; sys.exit(main())" build -W -n --keep-going --path-output $(BOOK_OUT) .
	@echo "$(LIB_HASH)" > $(BUILD)/.lib-hash
	@echo "The site is at $(abspath $(BUILD))/html/index.html"

# One pytest run covers the package tests and every notebook (nbval), spread over $(JOBS) cores
# (--dist loadfile keeps all cells of one notebook on one worker, hence in one kernel). Without a CUDA GPU
# gpuperf.kernels switches the Triton interpreter on by itself; TRITON_INTERPRET is not forced here, so on
# a GPU machine the kernels and the GPU-only tests run compiled. Then the strict site build, then the
# browser tests on that site (they need it built; without Chromium they skip, saying how to install it).
test: $(ENV_DEP)
	MPLBACKEND=Agg $(PYTHON) -m pytest -n $(JOBS) --dist loadfile --nbval-lax --nbval-current-env --durations=30 \
		-p no:cacheprovider --ignore=tests/browser tests book labs
	$(MAKE) --no-print-directory book PYTHON=$(PYTHON)
	rm -rf $(BUILD)/screenshots
	GPUPERF_SITE=$(abspath $(BUILD))/html $(PYTHON) -m pytest -n $(JOBS) --dist load -p no:cacheprovider \
		-rs tests/browser

# On a CUDA machine: the whole test suite and every chapter and lab under nbval, the kernels compiled, in
# $(JOBS) workers (no site build, no browser tests: `make test` covers those). E.g. on a GPU box whose
# python3 has torch and triton (add pytest, pytest-xdist, hypothesis, nbval, ipykernel, ipywidgets, nbformat,
# nbclient, pyyaml from wheels): make test-gpu PYTHON=python3 JOBS=12.
# --dist loadgroup hands out tests one by one (a file's kernel tests, which compile, spread over the workers)
# while tests/conftest.py keeps each notebook's cells together on one worker and hands the notebooks out
# first. Tests marked redundant_on_gpu (what a GPU run repeats compiled, e.g. compiling for sm_90 on a
# CPU) are skipped. Fails at once without a CUDA GPU, or with TRITON_INTERPRET on. lib/ goes on PYTHONPATH
# (gpuperf need not be installed; the notebooks' install cells then find it and install nothing).
# OMP_NUM_THREADS=1: each worker's float64 CPU references use one thread, so JOBS workers do not each start
# a thread per core and oversubscribe the CPU while others compile kernels.
test-gpu: $(ENV_DEP)
	@$(PYTHON) -c "import os, sys, torch; sys.exit('make test-gpu needs a CUDA GPU: torch.cuda.is_available() is False' if not torch.cuda.is_available() else 'make test-gpu runs the kernels compiled: unset TRITON_INTERPRET' if os.environ.get('TRITON_INTERPRET', '0') not in ('', '0') else 0)"
	PYTHONPATH=$(CURDIR)/lib$${PYTHONPATH:+:$$PYTHONPATH} MPLBACKEND=Agg OMP_NUM_THREADS=1 \
		$(PYTHON) -m pytest -n $(JOBS) --dist loadgroup --nbval-lax --nbval-current-env \
		-p no:cacheprovider -m "not redundant_on_gpu" --durations=15 --ignore=tests/browser tests book labs

# Fails with a message (exit 2) without torch, triton or a CUDA GPU, or with TRITON_INTERPRET on.
bench: $(ENV_DEP)
	$(PYTHON) bench/run.py $(BENCH_ARGS)

# The labs in JupyterLab, in the course environment (pass e.g. LAB_ARGS="--no-browser --port 8890";
# as root, in a container: LAB_ARGS=--allow-root).
# GPUPERF_LAB_SOLUTIONS=1 make lab runs them with the course's solutions in place of the exercise cells.
LAB_ARGS ?=
lab: $(ENV_DEP)
	$(PYTHON) -m jupyterlab --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/labs $(LAB_ARGS)

# Colab's versions, tested here (FACTS: Colab's GPU runtime has Python 3.13, torch 2.11.0, triton 3.6.0,
# numpy 2.1, matplotlib 3.10, ipywidgets 7.7.1): a venv with those pins runs the graders, the labs as
# shipped (nbval), the labs with the solutions (tests/test_labs.py) and the explorers' tests. COLAB_PY is a
# Python 3.13 (with pyenv: PYENV_VERSION=3.13.0 make test-colab). torch==2.11.0 from PyPI is the CUDA build
# (about 3 GB of nvidia-* wheels; it runs on a CPU); PyTorch's CPU-only index is not used.
COLAB_PY ?= python3.13
COLAB_VENV ?= .venv-colab
COLAB_PINS := "torch==2.11.0" "triton==3.6.0" "ipywidgets==7.7.1" "numpy==2.1.*" "matplotlib==3.10.*"
COLAB_TOOLS := "nbval>=0.11,<0.12" "pytest>=8" "pytest-xdist>=3.5" "hypothesis>=6.100" nbformat nbclient \
	ipykernel pyyaml tqdm
$(COLAB_VENV)/.installed: Makefile pyproject.toml
	$(COLAB_PY) -m venv $(COLAB_VENV)
	set -o pipefail; $(COLAB_VENV)/bin/python -m pip install -q $(COLAB_PINS) $(COLAB_TOOLS) 2>&1 | { grep -v '^WARNING: Location' || true; }
	set -o pipefail; $(COLAB_VENV)/bin/python -m pip install -q --no-deps -e . 2>&1 | { grep -v '^WARNING: Location' || true; }
	touch $@
test-colab: $(COLAB_VENV)/.installed
	$(COLAB_VENV)/bin/python -c "import sys, torch, triton, numpy, ipywidgets; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__, ipywidgets.__version__)"
	MPLBACKEND=Agg $(COLAB_VENV)/bin/python -m pytest -n $(JOBS) --dist loadfile --nbval-lax --nbval-current-env \
		-p no:cacheprovider tests/test_grading.py tests/test_labs.py tests/test_explorers_*.py labs

# Clear outputs, execution counts and widget state from every notebook before committing.
strip: $(ENV_DEP)
	$(PYTHON) tools/strip_notebooks.py

clean:
	rm -rf $(BUILD)
