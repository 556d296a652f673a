"""The IR features Promela needs, tested on hand-made Systems: exclusive control (atomic),
timeout, assertions on transitions and error conditions."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from absmc.codegen.python import compile_system
from absmc.ir import Command, Process, Property, RangeSort, System, Variable
from absmc.ir.expr import FALSE, Const, Op, Var
from absmc.kernel.explore.search import search
from absmc.kernel.replay.trace import replay

from .strategies import finite_systems

R = RangeSort(0, 3, "wrap")
X, Y, PA, PB = (Var(n, R) for n in ("x", "y", "pa", "pb"))


def eq(v: Var, k: int) -> Op:
    return Op("==", (v, Const(k)))


def system(cmds: list[Command], props: tuple[Property, ...] = ()) -> System:
    vs = tuple(Variable(n, R) for n in ("x", "y", "pa", "pb"))
    return System(vs, (Process("A", "pa"), Process("B", "pb")), tuple(cmds), props)


def test_exclusive_chain_is_one_step_and_intermediate_states_are_not_stored() -> None:
    s = system(
        [
            # A: x := 1 (keeps control), then x := 2 (ends the chain)
            Command("A", eq(PA, 0), (("x", Const(1)), ("pa", Const(1))), exclusive="A"),
            Command("A", eq(PA, 1), (("x", Const(2)), ("pa", Const(2)))),
            Command("B", eq(PB, 0), (("y", X), ("pb", Const(1)))),
        ]
    )
    c = compile_system(s)
    succ, _ = c.successors(c.initial)
    labels = [lab for lab, _ in succ]
    assert len(labels) == 2
    chain = next(lab for lab in labels if lab >= len(s.commands))
    assert c.commands_of(chain) == (0, 1)
    # B never sees x == 1: y is 0 or 2
    out = search(c, keep_going=True)
    assert out.states == 5  # (0,0), (2,0), (0,0)->B, (2,2), (2,0 with pb=1)
    ys = set()
    stack, seen = [c.initial], {c.initial}
    while stack:
        st = stack.pop()
        ys.add(st[1])
        for _, t in c.successors(st)[0]:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    assert ys == {0, 2}


def test_blocked_exclusive_process_lets_others_move() -> None:
    s = system(
        [
            Command("A", eq(PA, 0), (("x", Const(1)), ("pa", Const(1))), exclusive="A"),
            Command("A", Op("&&", (eq(PA, 1), eq(Y, 1))), (("x", Const(2)), ("pa", Const(2)))),
            Command("B", eq(PB, 0), (("y", Const(1)), ("pb", Const(1)))),
        ]
    )
    c = compile_system(s)
    # from the initial state: A's chain stops where A is blocked (x == 1 is stored), B moves
    assert sorted(t for _, t in c.successors(c.initial)[0]) == [(0, 1, 0, 1), (1, 0, 1, 0)]


def test_timeout_commands_only_when_nothing_else_can_move() -> None:
    s = system(
        [
            Command(
                "A", Op("&&", (eq(PA, 0), Op("<", (X, Const(2))))), (("x", Op("+", (X, Const(1)))),)
            ),
            Command("A", eq(PA, 0), (("pa", Const(1)),), flags=frozenset({"timeout"})),
            Command("B", FALSE, ()),
        ]
    )
    c = compile_system(s)
    assert [lab for lab, _ in c.successors(c.initial)[0]] == [0]
    assert [lab for lab, _ in c.successors((2, 0, 0, 0))[0]] == [1]


def test_failed_assertion_is_reported_and_the_command_still_executes() -> None:
    prop = Property("assert@1", "assert", Op("==", (X, Const(0))))
    s = system(
        [
            Command("A", eq(PA, 0), (("pa", Const(1)),), asserts=(("assert@1", eq(X, 0)),)),
            Command("B", eq(PB, 0), (("x", Const(1)), ("pb", Const(1)))),
        ],
        (prop,),
    )
    c = compile_system(s)
    out = search(c, keep_going=True)
    v = out.violations["assert@1"]
    trace = replay(c, "assert@1", v.path)
    assert trace.note is not None and "assertion violated" in trace.note
    assert trace.steps[-1].state["x"] == 1
    assert out.states == 4  # the assertion does not cut the state space


def test_error_condition_is_a_model_error_and_blocks_the_command() -> None:
    s = system(
        [
            Command(
                "A", eq(PA, 0), (("pa", Const(1)),), errors=((eq(X, 1), "index out of bounds"),)
            ),
            Command("B", eq(PB, 0), (("x", Const(1)), ("pb", Const(1)))),
        ]
    )
    c = compile_system(s)
    assert c.successors((1, 0, 0, 1)) == ([], ((0, "index out of bounds", "no-model-error"),))
    out = search(c, keep_going=True)
    assert "no-model-error" in out.violations


def _fused_agrees_with_generic(base: System, data: st.DataObject) -> None:
    procs = [p.name for p in base.processes]
    cmds = []
    for c in base.commands:
        excl = data.draw(st.sampled_from([None, None, c.process, *procs]))
        tmo = data.draw(st.integers(0, 5)) == 0
        cmds.append(replace(c, exclusive=excl, flags=frozenset({"timeout"}) if tmo else c.flags))
    s = base.with_(commands=tuple(cmds), properties=())
    fused = compile_system(s)
    assert fused.expand_level is not None
    generic = dataclasses.replace(compile_system(s), make_expander=None)
    a = search(fused, keep_going=True)
    b = search(generic, keep_going=True)
    assert (a.states, a.transitions, a.max_depth) == (b.states, b.transitions, b.max_depth)
    assert {k: (v.path, v.count) for k, v in a.violations.items()} == {
        k: (v.path, v.count) for k, v in b.violations.items()
    }


@settings(max_examples=25, deadline=None)
@given(finite_systems(), st.data())
def test_fused_breadth_first_expansion_finds_what_the_generic_loop_finds(
    base: System, data: st.DataObject
) -> None:
    _fused_agrees_with_generic(base, data)  # 25 systems in CI, 80 under -m slow


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(finite_systems(), st.data())
def test_fused_breadth_first_expansion_finds_what_the_generic_loop_finds_80(
    base: System, data: st.DataObject
) -> None:
    _fused_agrees_with_generic(base, data)
