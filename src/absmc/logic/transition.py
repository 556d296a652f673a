"""A System as a symbolic transition system over Z3 (initial condition, one transition formula
per command, error conditions of safety properties), for the induction engines (``pdr``,
``kind``) and the independent check of their certificates.

The formulas follow the concrete semantics of :mod:`absmc.codegen.python` exactly, through
:mod:`absmc.logic.definedness` (one semantics of model errors for every engine) and
:mod:`absmc.logic.z3conv` (C division, shifts, ``select``):

* a state gives every variable a value; a finite range's value lies in its range (``domain``);
  ``INT`` variables are unbounded mathematical integers, ``BOOL`` variables Z3 booleans;
* the initial states: declared values for the variables the ``init:`` constraint does not
  mention, the constraint (defined and true) for the others (as
  :func:`absmc.kernel.model.initial.is_initial`);
* command ``c`` steps from ``s`` to ``s'`` when it is *cleanly enabled*
  (:func:`~absmc.logic.definedness.enabled_cleanly`: no ``errors`` condition, no division by
  zero, guard true, every assignment to an ``overflow="error"`` range inside it) and ``s'``
  gives each assigned variable its right-hand side evaluated in ``s`` — reduced into its range
  for ``overflow="wrap"`` (Promela's two's-complement truncation, ``intsem.wrap``) — and every
  other variable its old value. A command whose assertion fails still steps (the failure is
  an ``assert`` violation, recorded on the side).

Commands that need more than one state of context — Promela's ``atomic`` (``exclusive``) and
``timeout`` — are not encoded: the engines refuse such models through their capabilities.

Every formula is built from IR expressions, so :class:`TransitionSystem` in a fresh context
(another :class:`z3.Context`) rebuilds all of it from the System alone: the certificate check
(:mod:`absmc.logic.certificate`) shares nothing with the solver run it checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import z3

from absmc.ir.ctl import And, Atom, Formula, Implies, Not, Or, Temporal
from absmc.ir.expr import TRUE, Expr, conj, disj, free_vars, neg, op
from absmc.ir.simplify import simplify, truth_value
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, Command, System
from absmc.logic.definedness import (
    assert_violation,
    definedness,
    enabled_cleanly,
    enabled_or_failing,
    error_condition,
    violation_condition,
)
from absmc.logic.z3conv import Z3Term, Z3Translator

__all__ = [
    "BadCondition",
    "NotSafety",
    "TransitionSystem",
    "bad_condition",
    "ctl_safety_body",
    "encodable_commands",
]

#: the suffix of the next-state copy of a variable
PRIMED = "'"


class NotSafety(Exception):
    """A property the induction engines cannot state as "no reachable state is bad" (a CTL
    formula other than ``AG`` of a state formula, an atom that may divide by zero)."""


@dataclass(frozen=True)
class BadCondition:
    """The error states of one safety property: ``state`` a condition on states (``None``:
    none), ``steps`` conditions on the pre-state of a command (by command index) under which
    executing it violates the property (a failed assertion, a model error): the counterexample
    ends with that command."""

    name: str
    kind: str
    state: Expr | None
    steps: tuple[tuple[int, Expr], ...] = ()


def ctl_safety_body(f: Formula) -> Expr | None:
    """``p`` as an IR expression when ``f`` is ``AG p`` with ``p`` a state formula (no temporal
    operator), else ``None``."""
    if not (isinstance(f, Temporal) and f.op == "AG"):
        return None
    return _state_expr(f.arg)


def _state_expr(f: Formula) -> Expr | None:
    if isinstance(f, Atom):
        return f.expr
    if isinstance(f, Not):
        a = _state_expr(f.arg)
        return None if a is None else neg(a)
    if isinstance(f, (And, Or, Implies)):
        left, right = _state_expr(f.left), _state_expr(f.right)
        if left is None or right is None:
            return None
        if isinstance(f, And):
            return conj([left, right])
        if isinstance(f, Or):
            return disj([left, right])
        return op("=>", left, right)
    return None


def bad_condition(system: System, name: str, kind: str) -> BadCondition:
    """The error states of the safety property ``name`` of kind ``kind`` (``invariant``,
    ``unreachable``, ``assert``, ``deadlock``, ``model-error``, ``ctl``). Raises
    :class:`NotSafety` for a CTL property that is not ``AG`` of a state formula or whose atoms
    may divide by zero."""
    if kind == "ctl":
        prop = next(p for p in system.ctl if p.name == name)
        body = ctl_safety_body(prop.formula)
        if body is None:
            raise NotSafety("it is not AG of a state formula (a safety property)")
        if definedness(body) != TRUE:
            raise NotSafety("its state formula may divide by zero")
        return BadCondition(name, kind, neg(body))
    cmds = encodable_commands(system)
    if kind == "deadlock" or name == NO_DEADLOCK:
        stuck: Expr = conj([neg(enabled_or_failing(c)) for c in cmds])
        if system.valid_end is not None:
            stuck = conj([stuck, definedness(system.valid_end), neg(system.valid_end)])
        return BadCondition(name, "deadlock", stuck)
    if kind == "model-error" or name == NO_MODEL_ERROR:
        steps = [(c.index, error_condition(system, c, None, c.asserts)) for c in cmds]
        return BadCondition(name, "model-error", None, _nontrivial(steps))
    if kind == "assert":
        steps = []
        for c in cmds:
            ks = [k for k, (n, _) in enumerate(c.asserts) if n == name]
            if ks:
                steps.append(
                    (c.index, disj([assert_violation(c, c.guard, c.asserts, k) for k in ks]))
                )
        return BadCondition(name, kind, None, _nontrivial(steps))
    model_prop = system.get_property(name)
    return BadCondition(name, kind, violation_condition(model_prop.expr, model_prop.kind))


def _nontrivial(steps: Sequence[tuple[int, Expr]]) -> tuple[tuple[int, Expr], ...]:
    """The conditions that constant folding does not make false."""
    out = []
    for i, e in steps:
        folded = simplify(e)
        if truth_value(folded) is not False:
            out.append((i, folded))
    return tuple(out)


def encodable_commands(system: System) -> tuple[Command, ...]:
    """The commands of ``system`` (all of them: the engines refuse ``timeout`` and exclusive
    commands through their capabilities; the check here keeps the encoding honest). Raises
    ``ValueError`` when one needs more than one state of context."""
    for c in system.commands:
        if c.exclusive is not None or "timeout" in c.flags:
            raise ValueError(f"command {c.index} is exclusive or a timeout: not encoded")
    return system.commands


class TransitionSystem:
    """``system`` over Z3 in ``ctx`` (a fresh context when ``None``): state variables
    :attr:`current` and :attr:`primed` (one Z3 constant per IR variable, named after it, the
    primed copy with a trailing ``'``), and the formulas of the module doc. Raises
    ``ValueError`` for an operator the logic layer does not encode (``& | ^ ~``)."""

    def __init__(self, system: System, ctx: z3.Context | None = None) -> None:
        self.system = system
        self.ctx = ctx if ctx is not None else z3.Context()
        self.tr = Z3Translator(self.ctx)
        self.names = tuple(v.name for v in system.variables)
        self.current = tuple(self.tr.var(v.name, v.sort) for v in system.variables)
        self.primed = tuple(self.tr.var(v.name + PRIMED, v.sort) for v in system.variables)
        self.commands = encodable_commands(system)
        self._steps: dict[int, Z3Term] = {}

    def term(self, e: Expr, primed: bool = False) -> Z3Term:
        """The IR expression ``e`` over the current (or primed) state."""
        return self.tr(e, PRIMED if primed else "")

    def domain(self, primed: bool = False) -> Z3Term:
        """Every finite-range variable lies in its range."""
        vs = self.primed if primed else self.current
        parts = [
            z3.And(x >= v.sort.lo, x <= v.sort.hi)
            for v, x in zip(self.system.variables, vs, strict=True)
            if isinstance(v.sort, RangeSort)
        ]
        return z3.And(*parts) if parts else z3.BoolVal(True, self.ctx)

    def init(self) -> Z3Term:
        """The initial states (with :meth:`domain`)."""
        c = self.system.init_constraint
        free = free_vars(c) if c is not None else frozenset()
        parts = [self.domain()]
        for v, x in zip(self.system.variables, self.current, strict=True):
            if v.name in free:
                continue
            parts.append(x == (z3.BoolVal(bool(v.init), self.ctx) if _is_bool(v.sort) else v.init))
        if c is not None:
            parts.append(self.term(conj([definedness(c), c])))
        return z3.And(*parts)

    def step(self, command: Command) -> Z3Term:
        """Command ``command`` steps from the current to the primed state."""
        got = self._steps.get(command.index)
        if got is not None:
            return got
        parts = [self.enabled(command)]
        for xp, value in zip(self.primed, self.next_values(command), strict=True):
            parts.append(xp == value)
        out = z3.And(*parts)
        self._steps[command.index] = out
        return out

    def enabled(self, command: Command) -> Z3Term:
        """``command`` is cleanly enabled in the current state (no model error, guard true)."""
        return self.term(enabled_cleanly(self.system, command, command.asserts))

    def next_values(self, command: Command) -> tuple[Z3Term, ...]:
        """The value of every variable after ``command``, over the current state (wrapped
        into its range for ``overflow="wrap"``; meaningful where it is cleanly enabled)."""
        updates = command.update_map()
        out = []
        for v, x in zip(self.system.variables, self.current, strict=True):
            rhs = updates.get(v.name)
            if rhs is None:
                out.append(x)
                continue
            value = self.term(rhs)
            if isinstance(v.sort, RangeSort) and v.sort.overflow == "wrap":
                size = v.sort.hi - v.sort.lo + 1
                value = (value - v.sort.lo) % size + v.sort.lo
            out.append(value)
        return tuple(out)

    def transition(self) -> Z3Term:
        """Some command steps from the current to the primed state."""
        return z3.Or(*[self.step(c) for c in self.commands], self.ctx)

    def bad(self, cond: BadCondition) -> Z3Term:
        """The pre-states of a violation of ``cond`` (a bad state, or a state in which a
        violating command executes)."""
        parts = [] if cond.state is None else [self.term(cond.state)]
        parts += [self.term(e) for _, e in cond.steps]
        return z3.Or(*parts, self.ctx) if parts else z3.BoolVal(False, self.ctx)

    def state_of(self, model: z3.ModelRef, vs: Sequence[Z3Term] | None = None) -> tuple[int, ...]:
        """The state (an int tuple, booleans 0/1) a model gives ``vs`` (default the current
        variables); a variable the model leaves free takes its declared initial value if that
        fits, else the smallest value of its range (any value is a state)."""
        out = []
        for v, x in zip(self.system.variables, vs or self.current, strict=True):
            val = model.eval(x, model_completion=True)
            if _is_bool(v.sort):
                out.append(1 if z3.is_true(val) else 0)
            else:
                out.append(val.as_long())
        return tuple(out)

    def rename(self, f: Z3Term, target: Sequence[Z3Term], primed: Sequence[Z3Term] = ()) -> Z3Term:
        """``f`` with the current variables replaced by ``target`` (and the primed ones by
        ``primed`` when given)."""
        pairs = list(zip(self.current, target, strict=True))
        if primed:
            pairs += list(zip(self.primed, primed, strict=True))
        return z3.substitute(f, *pairs)

    def copy(self, tag: str) -> tuple[Z3Term, ...]:
        """A fresh copy of the state variables (named ``NAME@tag``), for unrollings."""
        return tuple(self.tr.var(f"{v.name}@{tag}", v.sort) for v in self.system.variables)


def _is_bool(sort: object) -> bool:
    return isinstance(sort, BoolSort)
