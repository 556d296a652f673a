"""The model interface (:class:`absmc.kernel.model.semantics.Semantics`), stated once and checked on
every implementation: a System in generated Python and by the reference evaluator (GCL and
Promela, chains and channels included), a Python component, and a model behind the
:class:`~absmc.kernel.model.semantics.ModelWrapper` every wrapper derives from.

The contract, on the first states reached breadth-first:

* ``initial`` is the first of ``initial_states()``;
* every step ``(label, t)`` of ``successors(s)`` is ``step`` applied to the commands of
  ``commands_of(label)`` in turn (a chain is its commands, one after another);
* ``describe_state`` names the state's values, ``describe_step`` names every step;
* ``properties`` have a name and a kind; ``violated`` indexes them;
* ``dependencies``: ``None`` ("unknown"), or one entry per command, in command order, whose
  write set contains every variable a step of that command changes, whose read and write sets
  cover its shared variables, and whose process is the one that owns the command.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from absmc.codegen.python import compile_system
from absmc.codegen.reference import ReferenceSemantics
from absmc.component import ComponentOptions
from absmc.component.machine import ComponentSemantics
from absmc.component.program import build_program, load_program
from absmc.ir.steps import GroupDeps, State
from absmc.kernel.model.semantics import ModelWrapper, Semantics
from absmc.lang.loader import load_model

from .conftest import EXAMPLES

#: states explored per model (enough to meet chains, channels and every thread's steps)
BOUND = 150


def _ir(path: str, reference: bool) -> Callable[[], Semantics]:
    def make() -> Semantics:
        system = load_model(EXAMPLES / path)
        return ReferenceSemantics(system) if reference else compile_system(system)

    return make


def _component() -> Semantics:
    mod = load_program(EXAMPLES / "python" / "philosophers.py")
    ns = mod.__dict__
    options = ComponentOptions()
    prog, code = build_program(
        ns, ns["dinner"], ["philosopher"], options.granularity, options.env_choices
    )
    return ComponentSemantics(prog, code, [2])


def _wrapped() -> Semantics:
    return ModelWrapper(_ir("gcl/peterson.gcl", False)())


MODELS: dict[str, Callable[[], Semantics]] = {
    "gcl-compiled": _ir("gcl/peterson.gcl", False),
    "gcl-reference": _ir("gcl/peterson.gcl", True),
    "promela-chains-compiled": _ir("promela/fischer.pml", False),
    "promela-chains-reference": _ir("promela/fischer.pml", True),
    "promela-channels-compiled": _ir("promela/pingpong_buggy.pml", False),
    "component": _component,
    "wrapper": _wrapped,
}

#: the models that give dependency information (the IR's)
WITH_DEPENDENCIES = {k for k in MODELS if k != "component"}


def _reachable(sem: Semantics) -> list[State]:
    seen = dict.fromkeys(sem.initial_states())
    frontier = list(seen)
    while frontier and len(seen) < BOUND:
        nxt = []
        for s in frontier:
            for _, t in sem.successors(s)[0]:
                if t not in seen and len(seen) < BOUND:
                    seen[t] = None
                    nxt.append(t)
        frontier = nxt
    return list(seen)


def _replay(sem: Semantics, s: State, commands: tuple[int, ...]) -> State | None:
    state: State | None = s
    for ci in commands:
        assert state is not None
        state, _ = sem.step(ci, state)
    return state


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_contract(name: str) -> None:
    sem = MODELS[name]()
    inits = sem.initial_states()
    assert inits and sem.initial == inits[0]
    for p in sem.properties:
        assert isinstance(p.name, str) and p.name and isinstance(p.kind, str)
    states = _reachable(sem)
    assert len(states) > 3
    steps = 0
    for s in states:
        names = sem.describe_state(s)
        assert names and all(isinstance(k, str) for k in names)
        for k in sem.violated(s):
            assert 0 <= k < len(sem.properties)
        for label, t in sem.successors(s)[0]:
            commands = sem.commands_of(label)
            assert commands, f"step {label} of {s} has no commands"
            assert _replay(sem, s, commands) == t, f"step {label} does not replay"
            assert sem.describe_step(label)
            steps += 1
    assert steps > 0
    deps = sem.dependencies
    if name not in WITH_DEPENDENCIES:
        assert deps is None
        return
    assert deps is not None
    _check_dependencies(sem, states, deps)


def _check_dependencies(sem: Semantics, states: list[State], deps: tuple[GroupDeps, ...]) -> None:
    assert [d.index for d in deps] == list(range(len(deps)))
    written = 0
    for s in states:
        before = sem.describe_state(s)
        for label, _ in sem.successors(s)[0]:
            state: State | None = s
            for ci in sem.commands_of(label):
                assert state is not None
                old = sem.describe_state(state)
                state, _ = sem.step(ci, state)
                assert state is not None
                new = sem.describe_state(state)
                changed = {k for k in new if new[k] != old[k]}
                assert changed <= deps[ci].writes, (ci, changed - deps[ci].writes)
                written += bool(changed)
        assert before == sem.describe_state(s)
    assert written > 0
    for d in deps:
        assert d.shared <= d.reads | d.writes
        others = [e for e in deps if e.process != d.process]
        for v in d.shared:
            assert any(v in e.reads | e.writes for e in others)


def test_dependencies_see_shared_variables() -> None:
    """Peterson's ``turn`` and flags are shared, each process's pc is its own."""
    system = load_model(EXAMPLES / "gcl" / "peterson.gcl")
    deps = compile_system(system).dependencies
    shared = frozenset().union(*(d.shared for d in deps))
    assert shared == {"flag0", "flag1", "turn"}
    assert {d.process for d in deps if "pc0" in d.writes} == {"P0"}


def test_wrappers_derive_from_the_model_wrapper() -> None:
    """The LTL product, the fairness counter and the stutter step inherit their defaults."""
    from absmc.kernel.ltl.fairness import FairSemantics
    from absmc.kernel.ltl.lasso import StutterWhere
    from absmc.kernel.ltl.product import ProductSemantics

    for cls in (ProductSemantics, FairSemantics, StutterWhere):
        assert issubclass(cls, ModelWrapper)
    assert {"initial_states", "step", "valid_end"}.isdisjoint(vars(StutterWhere))


def test_the_ltl_product_takes_any_model() -> None:
    """The product reads the model interface only: over a Python component (no System) with a
    one-state automaton whose guard holds everywhere, each state's product steps are its
    steps, and its deadlocks stutter."""
    from absmc.ir.expr import TRUE
    from absmc.ir.ltl import Automaton, Edge
    from absmc.kernel.ltl.product import STUTTER, ProductSemantics, decode

    base = _component()
    always = Automaton(0, ((Edge(0, TRUE),),), frozenset({0}))
    product = ProductSemantics(base, always, lambda _g: lambda _s: True)
    with base.guarded():  # type: ignore[attr-defined]
        frontier, seen, stutters = [product.initial], set(), 0
        while frontier and len(seen) < 200:
            ps = frontier.pop()
            if ps in seen:
                continue
            seen.add(ps)
            steps, _ = product.successors(ps)
            base_steps, _ = base.successors(ps[:-1])
            if not base_steps:
                stutters += 1
                assert [decode(lab, 1)[0] for lab, _ in steps] == [STUTTER]
                continue
            assert [(decode(lab, 1)[0], t[:-1]) for lab, t in steps] == list(base_steps)
            frontier += [t for _, t in steps]
        base.restore()  # type: ignore[attr-defined]
    assert len(seen) > 10 and stutters >= 1  # the philosophers reach their deadlock


def test_the_component_model_has_no_system() -> None:
    assert not hasattr(_component(), "system")
