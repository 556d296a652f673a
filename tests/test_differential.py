"""Differential tests: every method against exact search on random GCL models
(:mod:`tests.generators`).

Exact search (``explicit``, keep-going, within a state limit) is the reference. For every other
method and every property: no internal error (only a clear refusal: ``OptionError`` /
``ModelError``), never ``holds`` where exact search finds a violation, never ``violated``
where exact search proves ``holds``, and every ``violated`` trace replays on the *reference*
semantics (``absmc.ir.evaluate``, independent of the compiled code the engines use). 40 seeded
models in CI (blocks 0-1); ``pytest -m slow`` runs the other 160 of the first 200 and 2,000
more.

One adapter function per engine keeps the calls in one place.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from absmc.engines.explicit import check_explicit
from absmc.engines.fourvalued import check_fourvalued
from absmc.engines.typeabs import OperatorLibrary, TypesOptions, check_types
from absmc.engines.under import UnderOptions, check_under
from absmc.ir import System
from absmc.ir.span import ModelError
from absmc.kernel.run.options import CheckOptions, Limits, OptionError
from absmc.kernel.run.result import Result, Verdict
from absmc.lang.domains import parse_bindings
from absmc.lang.gcl import parse_gcl, parse_gcl_expr

from .generators import GenModel, random_model
from .oracle import replays

MAX_STATES = 1000
TIMEOUT_S = 3.0
_LIBRARY = OperatorLibrary()
#: domains for the random --abstract binding: the cheap ones in CI, all in the slow run
DOMAINS_CI = ("signs", "point", "modulo(2)")
DOMAINS = (*DOMAINS_CI, "range(-1,2)", "set(0,1)")


def _limits() -> Limits:
    return Limits(max_states=MAX_STATES, timeout=TIMEOUT_S)


# -- one adapter per engine ------------------------------------------------------------------
def run_explicit(system: System) -> Result:
    return check_explicit(system, CheckOptions(keep_going=True, limits=_limits()))


def run_under(system: System, concrete_after: int | None = None) -> Result:
    options = CheckOptions(keep_going=concrete_after is not None, limits=_limits())
    under = UnderOptions(concrete_after=concrete_after, max_iterations=12, prover_timeout_ms=1000)
    return check_under(system, options, under)


def run_types(system: System, binding: str) -> Result:
    options = CheckOptions(limits=_limits())
    return check_types(system, options, TypesOptions(parse_bindings([binding])), _LIBRARY)


def run_fourvalued(system: System, predicates: list[str]) -> Result:
    preds = [parse_gcl_expr(p, system) for p in predicates]
    return check_fourvalued(system, CheckOptions(keep_going=True, limits=_limits()), preds)


def check_against(system: System, ref: Result, result: Result, what: str) -> None:
    """The soundness conditions of the module docstring for one method's ``result``."""
    truth = {r.property: r.verdict for r in ref.results}
    for r in result.results:
        expected = truth.get(r.property)
        if r.verdict is Verdict.HOLDS:
            assert expected is not Verdict.VIOLATED, f"{what}: wrong holds for {r.property}"
        elif r.verdict is Verdict.VIOLATED:
            assert expected is not Verdict.HOLDS, f"{what}: wrong violated for {r.property}"
            problem = replays(system, r)
            assert problem is None, f"{what}: {r.property} trace does not replay: {problem}"


def _refusal(run: Callable[[], Result]) -> Result | None:
    """The result, or ``None`` for a clear refusal (the only exceptions allowed)."""
    try:
        return run()
    except (OptionError, ModelError) as err:
        assert str(err), "a refusal says why"
        return None


def differential(seed: int, domains: tuple[str, ...] = DOMAINS) -> None:
    """Run every method on the model of ``seed`` (``types`` with a random binding to one of
    ``domains``) and check it against exact search."""
    model: GenModel = random_model(seed)
    system = parse_gcl(model.text, f"<seed {seed}>")
    ref = run_explicit(system)
    for r in ref.results:
        if r.verdict is Verdict.VIOLATED:
            assert replays(system, r) is None, f"explicit trace of {r.property} does not replay"
    rng = random.Random(seed)
    runs: list[tuple[str, Callable[[], Result]]] = [
        ("under", lambda: run_under(system)),
        ("under --concrete-after 2 --keep-going", lambda: run_under(system, 2)),
    ]
    var = rng.choice(model.int_vars)
    binding = f"{var}={rng.choice(domains)}"
    runs.append((f"types --abstract {binding}", lambda: run_types(system, binding)))
    preds = rng.sample(model.atoms, k=min(len(model.atoms), rng.randint(1, 3)))
    runs.append((f"fourvalued {preds}", lambda: run_fourvalued(system, preds)))
    for what, run in runs:
        result = _refusal(run)
        if result is not None:
            check_against(system, ref, result, f"seed {seed}: {what}\n{model.text}")


#: blocks of 20 seeds that CI runs (every method and domain of DOMAINS_CI is reached in the
#: first: point 8, signs 7, modulo(2) 5 times); the other blocks of the first 200 seeds run
#: under ``-m slow``
CI_BLOCKS = 1


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, marks=[pytest.mark.slow] if b >= CI_BLOCKS else []) for b in range(10)],
)
def test_every_method_agrees_with_exact_search_on_200_random_models(block: int) -> None:
    for seed in range(block * 20, block * 20 + 20):
        differential(seed, DOMAINS_CI)


@pytest.mark.slow
@pytest.mark.parametrize("block", range(100))
def test_every_method_agrees_with_exact_search_on_2000_more_random_models(block: int) -> None:
    for seed in range(10_000 + block * 20, 10_000 + block * 20 + 20):
        differential(seed)


def test_the_generator_writes_what_it_promises() -> None:
    texts = [random_model(seed).text for seed in range(200)]
    assert texts == [random_model(seed).text for seed in range(200)]  # deterministic
    joined = "\n".join(texts)
    for construct in (" / ", " % ", " ? ", "process P2", "unreachable", "invariant", ": bool"):
        assert construct in joined, construct
    systems = [parse_gcl(t) for t in texts]
    assert sum(len(s.processes) > 1 for s in systems) > 50
    # comparisons assigned as values
    assert any(" := (" in t and ("<" in t.split(":=")[1] or "==" in t) for t in texts)
