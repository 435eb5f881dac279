"""Fuzz every registered API alike (issue 23, item 8): random mutations of valid specs through
parse -> reconcile -> render -> update validation raise nothing but :class:`SpecError`, and
``pulumi-lws render`` of a mutated spec exits 0 or 2 (never 3, "internal error").

``make test`` runs a few hundred derandomized examples per API (the same ones on every run);
``make soak`` (``-m slow``) runs thousands per API from a seeded generator, the counts it prints
being the figures docs/api.md quotes.
"""

from __future__ import annotations

import random

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_fuzz import KINDS, mutate, run_pipeline, seeds

from pulumi_lws.cli import main
from pulumi_lws.cli.exit_codes import BAD_INPUT, OK

FAST_EXAMPLES = 250
SOAK_EXAMPLES = 3000


def _case(kind: str):
    @st.composite
    def case(draw):
        seed = draw(st.sampled_from(seeds(kind)))
        n = draw(st.integers(1, 3))
        return seed, mutate(seed, lambda k: draw(st.integers(0, k - 1)), n)

    return case()


@pytest.mark.parametrize("kind", KINDS)
def test_every_seed_is_accepted_and_renders(kind: str) -> None:
    for seed in seeds(kind):
        assert run_pipeline(kind, seed, seed)


@pytest.mark.parametrize("kind", KINDS)
def test_mutated_specs_raise_only_spec_errors(kind: str) -> None:
    @settings(
        max_examples=FAST_EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(_case(kind))
    def check(case) -> None:
        seed, doc = case
        run_pipeline(kind, doc, seed)

    check()


@pytest.mark.parametrize("kind", KINDS)
def test_render_of_a_mutated_spec_exits_0_or_2(kind: str, tmp_path, capsys) -> None:
    rng = random.Random(f"render-{kind}")
    path = tmp_path / "fuzz.yaml"
    codes = []
    for _ in range(25):
        seed = rng.choice(seeds(kind))
        path.write_text(yaml.safe_dump(mutate(seed, rng.randrange, rng.randint(1, 3)), sort_keys=False))
        code = main(["render", str(path)])
        out, err = capsys.readouterr()
        assert code in (OK, BAD_INPUT), err
        assert "internal error" not in err and "Traceback" not in err
        assert ("apiVersion" in out) == (code == OK)  # objects printed exactly when accepted
        codes.append(code)
    assert BAD_INPUT in codes  # the mutations do reach validation


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_soak_thousands_of_mutations_per_api(kind: str) -> None:
    rng = random.Random(f"soak-{kind}")
    accepted = 0
    for _ in range(SOAK_EXAMPLES):
        seed = rng.choice(seeds(kind))
        accepted += run_pipeline(kind, mutate(seed, rng.randrange, rng.randint(1, 3)), seed)
    print(
        f"{kind}: {SOAK_EXAMPLES} mutations, {accepted} accepted, {SOAK_EXAMPLES - accepted} refused, 0 raw exceptions"
    )
