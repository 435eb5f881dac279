# Every target bootstraps .venv on a fresh machine; no manual step.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check bench soak clean schema e2e e2e-tools e2e-up e2e-down

# The install log is kept in .venv/install.log and shown whole only when the install fails; while
# it runs (~1 min on a fresh machine) each package pip collects is named, so it is not silent.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@echo "setting up $(VENV): installing pulumi-lws and its test dependencies (log: $(VENV)/install.log)"
	@( $(BIN)/python -m pip install --upgrade pip && $(BIN)/python -m pip install -e '.[test]'; \
		echo $$? > $(VENV)/install.status ) 2>&1 | tee $(VENV)/install.log \
		| awk '/^Collecting /{ n++; printf "  [%d] %s\n", n, $$2; fflush() }'
	@test "$$(cat $(VENV)/install.status)" = 0 || { cat $(VENV)/install.log; exit 1; }
	@echo "$(VENV) ready"
	@touch $(STAMP)

demo: $(STAMP)
	@$(BIN)/pulumi-lws simulate examples/quickstart/scenario.yaml

test: $(STAMP)
	@$(BIN)/python -c 'import cairosvg' 2>/dev/null || echo "note: cairosvg cannot load the system cairo library" \
		"(Debian/Ubuntu: apt-get install libcairo2); tests/sim/driver/test_plot_render.py is skipped"
	@$(BIN)/python -m pytest -q -n 2 -m "not slow" --ignore=tests/e2e

# Lint, format and types (configured in pyproject.toml); .ci/run runs it before `make test`.
check: $(STAMP)
	@$(BIN)/ruff check .
	@$(BIN)/ruff format --check .
	@$(BIN)/mypy

# Regenerate the component provider's committed schema.json (tests/provider/test_schema_drift.py fails when stale).
schema: $(STAMP)
	@$(BIN)/python -m pulumi_lws.provider.schema

bench: $(STAMP)
	@$(BIN)/python bench/run.py

soak: $(STAMP)
	@LWS_SOAK=$${LWS_SOAK:-1} $(BIN)/python -m pytest -q -n 2 -m slow --ignore=tests/e2e

# The e2e tier (docs/e2e.md): a real control plane (etcd, kube-apiserver, controller manager,
# scheduler, kwok nodes) and the real Pulumi CLI, language host and pulumi-kubernetes provider,
# built from the Go module proxy into a cache outside the repository (e2e/toolchain/build.py).
E2E_VENV := .e2e/venv
E2E_STAMP := $(E2E_VENV)/.installed

e2e-tools:
	@$(PY) e2e/toolchain/build.py

# The e2e virtualenv: this project with the pulumi-kubernetes SDK of the provider the toolchain built.
$(E2E_STAMP): pyproject.toml e2e/constraints.txt
	@test -x $(E2E_VENV)/bin/python || $(PY) -m venv $(E2E_VENV)
	@echo "setting up $(E2E_VENV) (log: $(E2E_VENV)/install.log)"
	@$(E2E_VENV)/bin/python -m pip install -q --upgrade pip > $(E2E_VENV)/install.log 2>&1 && \
		$(E2E_VENV)/bin/python -m pip install '.[test]' -c e2e/constraints.txt >> $(E2E_VENV)/install.log 2>&1 \
		|| { cat $(E2E_VENV)/install.log; exit 1; }
	@touch $(E2E_STAMP)

# pulumi-lws is installed as a user installs it, not editable: the Python language host finds a
# package's pulumi-plugin.json under its install location (an editable install has none there), so
# it is reinstalled from the working tree on every e2e-up (~10 s, no dependency resolution).
e2e-up: e2e-tools $(E2E_STAMP)
	@$(E2E_VENV)/bin/python -m pip install -q --no-deps --no-build-isolation --force-reinstall . > $(E2E_VENV)/reinstall.log 2>&1 \
		|| { cat $(E2E_VENV)/reinstall.log; exit 1; }
	@$(E2E_VENV)/bin/python e2e/cluster.py up

e2e-down:
	@$(PY) e2e/cluster.py down

# Starts the cluster (or reuses a running one), runs tests/e2e, and stops the cluster whatever the result.
e2e: e2e-up
	@rc=0; $(E2E_VENV)/bin/python -m pytest -q tests/e2e $(E2E_ARGS) || rc=$$?; \
		$(PY) e2e/cluster.py down; exit $$rc

clean:
	rm -rf $(VENV) build *.egg-info
