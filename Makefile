# Every target bootstraps .venv on a fresh machine; no manual step.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check bench soak clean schema

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
	@$(BIN)/python -m pytest -q -n 2 -m "not slow"

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
	@LWS_SOAK=$${LWS_SOAK:-1} $(BIN)/python -m pytest -q -n 2 -m slow

clean:
	rm -rf $(VENV) build *.egg-info
