"""Hypothesis strategies for small random finite GCL systems (2-3 processes, bounded data).

Data variables are unbounded ``int`` in the IR (so abstraction methods treat them as data), but
every update is guarded by ``-B <= rhs <= B``, which keeps the reachable state space finite and
small; exact search is the oracle the abstraction methods are compared with.
"""

from __future__ import annotations

from hypothesis import strategies as st

from absmc.ir import BOOL, INT, Command, Expr, Process, Property, RangeSort, System, Variable
from absmc.ir.expr import Var, conj, const, op

BOUND = 3


def _atom(draw: st.DrawFn, data: list[Var]) -> Expr:
    a = draw(st.sampled_from(data))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return op(
            draw(st.sampled_from(["<=", "<", "==", "!="])), a, const(draw(st.integers(-2, 2)))
        )
    b = draw(st.sampled_from(data))
    if kind == 1:
        return op(draw(st.sampled_from(["<=", "<", "==", "!="])), a, b)
    return op(draw(st.sampled_from(["<=", ">="])), op("+", a, b), const(draw(st.integers(-1, 2))))


def _rhs(draw: st.DrawFn, data: list[Var]) -> Expr:
    a = draw(st.sampled_from(data))
    b = draw(st.sampled_from(data))
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return op("+", a, const(1))
    if choice == 1:
        return op("-", a, const(1))
    if choice == 2:
        return b
    if choice == 3:
        return const(draw(st.integers(-1, 2)))
    if choice == 4:
        return op("+", a, b)
    return op("-", a, b)


@st.composite
def finite_systems(draw: st.DrawFn, max_procs: int = 3, with_bool: bool = True) -> System:
    """A random System whose reachable state space is finite (see module docstring)."""
    n_data = draw(st.integers(1, 3))
    data = [Var(f"d{i}", INT) for i in range(n_data)]
    n_procs = draw(st.integers(2, max_procs))
    variables = [Variable(v.name, INT, draw(st.integers(-1, 1))) for v in data]
    flag = Var("flag", BOOL)
    if with_bool:
        variables.append(Variable("flag", BOOL, 0))
    processes: list[Process] = []
    commands: list[Command] = []
    for p in range(n_procs):
        locs = draw(st.integers(2, 3))
        pc = Var(f"pc{p}", RangeSort(0, locs - 1))
        variables.append(Variable(pc.name, pc.var_sort, 0))
        processes.append(Process(f"P{p}", pc.name))
        for _ in range(draw(st.integers(2, 4))):
            src = draw(st.integers(0, locs - 1))
            dst = draw(st.integers(0, locs - 1))
            guard_parts: list[Expr] = [op("==", pc, const(src))]
            if draw(st.booleans()):
                guard_parts.append(_atom(draw, data))
            if with_bool and draw(st.integers(0, 4)) == 0:
                guard_parts.append(flag if draw(st.booleans()) else op("!", flag))
            updates: list[tuple[str, Expr]] = []
            target = draw(st.sampled_from([*data, None]))
            if target is not None:
                rhs = _rhs(draw, data)
                guard_parts.append(op("<=", const(-BOUND), rhs))
                guard_parts.append(op("<=", rhs, const(BOUND)))
                updates.append((target.name, rhs))
            if with_bool and draw(st.integers(0, 4)) == 0:
                updates.append(("flag", op("!", flag)))
            if dst != src or not updates:
                updates.append((pc.name, const(dst)))
            commands.append(Command(f"P{p}", conj(guard_parts), tuple(updates)))
    bad_pcs = [
        op("==", Var(f"pc{p}", variables[-n_procs + p].sort), const(draw(st.integers(0, 1))))
        for p in range(n_procs)
    ]
    props = [Property("bad", "unreachable", conj([*bad_pcs[:2], _atom(draw, data)]))]
    return System(tuple(variables), tuple(processes), tuple(commands), tuple(props), (), "random")
