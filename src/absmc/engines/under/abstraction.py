"""Predicate sets and the abstraction function α of paper 000 (Section 3).

α(s) keeps the values of the *control* variables (program counters, finite ranges, bools —
never abstracted) and the bit-vector of the predicates Φ (normally over data variables). A
predicate may be *global* or attached to a location ``(pc variable, value)`` (transition
dependent predicates, Section 6): it then only contributes a bit in states at that location.

A predicate has three values in a state: true, false, or *undefined* when evaluating it is a
model error (a division or remainder by zero, C's undefined behaviour). The compiled α and the
prover's formulas use this one semantics (:mod:`absmc.logic.definedness`): an undefined
predicate contributes ``¬definedness(φ)``, a true one ``definedness(φ) ∧ φ``. (Reading an
undefined predicate as false made ``α(s)`` unsatisfiable for the prover, whose ``x / 0`` is an
unspecified value, and every check from such a state passed vacuously: a wrong ``holds``.)

The abstract state is the hashable key ``(control values..., predicate bits)``: bit ``k`` is
predicate ``k``'s truth, bit ``n + k`` (``n`` predicates) says it is undefined. The formula
``α(s)`` restricted to data is :meth:`Abstraction.data_formula`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from absmc.codegen.plan import may_raise
from absmc.codegen.python import PyExpr, unbounded_ints
from absmc.ir.expr import Expr, conj, const, substitute
from absmc.ir.intsem import runtime_namespace
from absmc.ir.printer import format_expr
from absmc.ir.simplify import simplify
from absmc.ir.sorts import BoolSort
from absmc.ir.system import System
from absmc.logic.definedness import three_valued_literal

AbstractState = tuple[int, ...]
Location = tuple[str, int]


@dataclass(frozen=True)
class Predicate:
    """An abstraction predicate (canonical atom) and its location (``None``: global)."""

    atom: Expr
    location: Location | None = None

    def __str__(self) -> str:
        text = format_expr(self.atom)
        if self.location is None:
            return text
        return f"{text} @ {self.location[0]}={self.location[1]}"


@dataclass
class PredicateSet:
    """An ordered set of predicates (insertion order is the bit order of α)."""

    items: list[Predicate] = field(default_factory=list)
    _index: dict[Predicate, int] = field(default_factory=dict)

    def add(self, p: Predicate) -> bool:
        """Add ``p``; ``True`` when it was new."""
        if p in self._index:
            return False
        self._index[p] = len(self.items)
        self.items.append(p)
        return True

    def __contains__(self, p: object) -> bool:
        return p in self._index

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Predicate]:
        return iter(self.items)

    def copy(self) -> PredicateSet:
        out = PredicateSet()
        for p in self.items:
            out.add(p)
        return out

    @classmethod
    def of(cls, preds: Iterable[Predicate]) -> PredicateSet:
        out = cls()
        for p in preds:
            out.add(p)
        return out


class Abstraction:
    """α for one System and one predicate set: a compiled key function and the formulas of
    abstract states (cached)."""

    def __init__(self, system: System, predicates: PredicateSet) -> None:
        self.system = system
        self.predicates = list(predicates)
        self.control = [v for v in system.variables if v.is_control]
        self.control_pos = {v.name: k for k, v in enumerate(self.control)}
        self.key: Callable[[tuple[int, ...]], AbstractState] = self._compile()
        self._formula_cache: dict[AbstractState, Expr] = {}

    def _compile(self) -> Callable[[tuple[int, ...]], AbstractState]:
        sys = self.system
        tr = PyExpr(dict(sys.index_of), unbounded_ints(sys), split=True)
        n = len(sys.variables)
        lines = ["def alpha(s):"]
        if n:
            lines.append(f"    {', '.join(f'v{i}' for i in range(n))}{',' if n == 1 else ''} = s")
        lines.append("    b = 0")
        for k, p in enumerate(self.predicates):
            cond = tr(p.atom)
            if p.location is not None:
                var, value = p.location
                cond = f"(v{sys.index_of[var]} == {value} and {cond})"
            if may_raise(p.atom):
                lines += [
                    "    try:",
                    f"        if {cond}: b |= {1 << k}",
                    "    except ZeroDivisionError:",
                    f"        b |= {1 << (len(self.predicates) + k)}",
                ]
            else:
                lines.append(f"    if {cond}: b |= {1 << k}")
        ctrl = ", ".join(f"v{sys.index_of[v.name]}" for v in self.control)
        lines.append(f"    return ({ctrl}{', ' if ctrl else ''}b,)")
        ns: dict[str, Any] = runtime_namespace()
        exec(compile("\n".join(lines + tr.helpers) + "\n", "<absmc-alpha>", "exec"), ns)
        fn: Callable[[tuple[int, ...]], AbstractState] = ns["alpha"]
        return fn

    def control_values(self, a: AbstractState) -> dict[str, Expr]:
        """The substitution ``{control variable: its value in a}``."""
        return {
            v.name: const(bool(a[k])) if isinstance(v.sort, BoolSort) else const(a[k])
            for k, v in enumerate(self.control)
        }

    def applies(self, p: Predicate, a: AbstractState) -> bool:
        """Whether predicate ``p`` contributes to abstract state ``a`` (its location holds)."""
        if p.location is None:
            return True
        var, value = p.location
        return a[self.control_pos[var]] == value

    def bit(self, a: AbstractState, k: int) -> bool:
        """Whether predicate ``k`` is true in abstract state ``a`` (``False`` also when it is
        undefined: see :meth:`value`)."""
        return bool(a[-1] >> k & 1)

    def value(self, a: AbstractState, k: int) -> bool | None:
        """The three-valued value of predicate ``k`` in ``a``: ``None`` when evaluating it is
        a model error."""
        if a[-1] >> (len(self.predicates) + k) & 1:
            return None
        return self.bit(a, k)

    def literals(self, a: AbstractState) -> list[Expr]:
        """The formula of every predicate that applies in ``a``: ``φ`` or ``¬φ`` guarded by
        ``φ``'s definedness, or ``¬definedness(φ)`` when ``φ`` is undefined in ``a``."""
        out = []
        for k, p in enumerate(self.predicates):
            if self.applies(p, a):
                out.append(three_valued_literal(p.atom, self.value(a, k)))
        return out

    def data_formula(self, a: AbstractState) -> Expr:
        """``α(s)`` restricted to the data: the predicate literals with the control values of
        ``a`` substituted and simplified."""
        hit = self._formula_cache.get(a)
        if hit is None:
            ctrl = self.control_values(a)
            hit = simplify(conj(substitute(lit, ctrl) for lit in self.literals(a)))
            self._formula_cache[a] = hit
        return hit

    def describe(self, a: AbstractState) -> str:
        """A readable rendering of an abstract state."""
        parts = [f"{v.name}={a[k]}" for k, v in enumerate(self.control)]
        parts += [format_expr(x) for x in self.literals(a)]
        return ", ".join(parts)
