# Every target bootstraps .venv on a fresh machine; no manual step.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench soak clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip >/dev/null
	@$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)
	@$(BIN)/pulumi-lws simulate examples/quickstart/scenario.yaml

test: $(STAMP)
	@$(BIN)/python -m pytest -q -n 2 -m "not slow"

bench: $(STAMP)
	@$(BIN)/python bench/run.py

soak: $(STAMP)
	@LWS_SOAK=1 $(BIN)/python -m pytest -q -n 2 -m slow

clean:
	rm -rf $(VENV) build *.egg-info
