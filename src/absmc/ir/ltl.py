"""Linear temporal logic over IR state expressions, and Büchi automata over the same expressions.

* :class:`Ltl` — a formula: atoms are IR boolean expressions over the System's variables
  (``Atom``), combined with the Boolean connectives and the temporal operators of SPIN's
  ``ltl`` syntax: ``X`` (next), ``[]`` (always), ``<>`` (eventually), ``U`` (strong until),
  ``W`` (weak until), ``V`` (release). Nodes are frozen and hash-consed (built through
  :func:`mk_ltl`, equal formulas are the same object), so formulas can key caches.
* :class:`LtlProperty` — a named property: an LTL formula (``ltl NAME { ... }``) or a
  hand-written automaton (a Promela ``never`` claim) whose accepting runs are the violations.
* :class:`Automaton` — a Büchi automaton with state-based acceptance whose edges carry IR
  guards over the System's variables (what a ``never`` claim is, and what the LTL translation
  of :mod:`absmc.kernel.ltl.buchi` produces from the negated formula). An edge ``q -> q'`` with
  guard ``g`` may be taken from the product state ``(s, q)`` when ``g`` holds in the system
  state ``s`` (the claim moves first, reading the current state, as in SPIN).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from absmc.ir.expr import Expr
from absmc.ir.printer import format_expr
from absmc.ir.span import SourceSpan

LtlOp = Literal[
    "atom", "true", "false", "!", "&&", "||", "->", "<->", "X", "[]", "<>", "U", "W", "V"
]

#: arity of each operator
ARITY: Final[dict[str, int]] = {
    "atom": 0,
    "true": 0,
    "false": 0,
    "!": 1,
    "X": 1,
    "[]": 1,
    "<>": 1,
    "&&": 2,
    "||": 2,
    "->": 2,
    "<->": 2,
    "U": 2,
    "W": 2,
    "V": 2,
}

#: the name of the non-progress property (SPIN's ``-l``): ``[] <> progress``, violated by a
#: cycle through no progress-labelled state; not a valid identifier, so no user name clashes
NON_PROGRESS: Final = "non-progress"

#: the temporal operators
TEMPORAL: Final = frozenset({"X", "[]", "<>", "U", "W", "V"})


@dataclass(frozen=True, slots=True)
class Ltl:
    """One node of an LTL formula: ``op`` with ``args`` (sub-formulas), or an ``atom`` with
    its IR expression ``expr``. Build nodes with :func:`mk_ltl`/:func:`atom` (hash-consed)."""

    op: LtlOp
    args: tuple[Ltl, ...] = ()
    expr: Expr | None = None

    def __str__(self) -> str:
        return format_ltl(self)


_TABLE: dict[tuple[str, tuple[Ltl, ...], Expr | None], Ltl] = {}


def mk_ltl(op: LtlOp, *args: Ltl) -> Ltl:
    """The (hash-consed) node ``op(args)``. Raises ``ValueError`` on a wrong arity."""
    if op == "atom" or ARITY.get(op) != len(args):
        raise ValueError(f"LTL operator {op!r} takes {ARITY.get(op)} arguments")
    key = (op, args, None)
    node = _TABLE.get(key)
    if node is None:
        node = _TABLE[key] = Ltl(op, args)
    return node


def atom(expr: Expr) -> Ltl:
    """The atomic proposition ``expr`` (a boolean IR expression over state variables)."""
    key = ("atom", (), expr)
    node = _TABLE.get(key)
    if node is None:
        node = _TABLE[key] = Ltl("atom", (), expr)
    return node


def non_progress_property(progress: Expr, span: SourceSpan | None = None) -> LtlProperty:
    """The non-progress property: ``[] <> progress`` (``progress``: some process is at a
    progress label). Its violations are SPIN's non-progress cycles."""
    f = mk_ltl("[]", mk_ltl("<>", atom(progress)))
    return LtlProperty(NON_PROGRESS, f, span, text="[] <> progress")


def atoms_of(f: Ltl) -> list[Expr]:
    """The atoms' expressions of ``f``, each once, in first-occurrence order."""
    out: dict[Expr, None] = {}
    stack = [f]
    seen: set[int] = set()
    while stack:
        g = stack.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        if g.op == "atom":
            assert g.expr is not None
            out.setdefault(g.expr, None)
        stack.extend(reversed(g.args))
    return list(out)


_SPOT_OP: Final = {"!": "!", "X": "X", "[]": "G", "<>": "F"}
_SPOT_BIN: Final = {"&&": "&", "||": "|", "->": "->", "<->": "<->", "U": "U", "W": "W", "V": "R"}


def to_spot_text(f: Ltl, names: dict[Expr, str]) -> str:
    """``f`` in Spot's LTL syntax, atoms written as ``names[expr]`` (fully parenthesized)."""
    if f.op == "atom":
        assert f.expr is not None
        return names[f.expr]
    if f.op in ("true", "false"):
        return f.op
    if len(f.args) == 1:
        return f"{_SPOT_OP[f.op]}({to_spot_text(f.args[0], names)})"
    a, b = (to_spot_text(x, names) for x in f.args)
    return f"({a}) {_SPOT_BIN[f.op]} ({b})"


def format_ltl(f: Ltl) -> str:
    """``f`` in SPIN's syntax (fully parenthesized; atoms in IR syntax)."""
    if f.op == "atom":
        assert f.expr is not None
        return f"({format_expr(f.expr)})"
    if f.op in ("true", "false"):
        return f.op
    if len(f.args) == 1:
        return f"{f.op}{format_ltl(f.args[0])}"
    a, b = (format_ltl(x) for x in f.args)
    return f"({a} {f.op} {b})"


@dataclass(frozen=True, slots=True)
class Edge:
    """An edge of an :class:`Automaton`: taken when ``guard`` holds in the current state."""

    target: int
    guard: Expr


@dataclass(frozen=True)
class Automaton:
    """A Büchi automaton with state-based acceptance over system states.

    ``edges[q]`` are the edges leaving state ``q`` (states are ``0 .. len(edges) - 1``);
    ``accepting`` the accepting states (a run visiting one infinitely often is accepted);
    ``names[q]`` a name for traces (a never claim's label or ``S<q>``). ``final`` states are
    where a claim *terminates* (the closing brace of a never claim: reaching it is a match in
    SPIN, i.e. a violation; translated LTL has none). ``progress`` states are a claim's
    progress-labelled states (unused for LTL)."""

    initial: int
    edges: tuple[tuple[Edge, ...], ...]
    accepting: frozenset[int]
    names: tuple[str, ...] = ()
    final: frozenset[int] = frozenset()

    @property
    def size(self) -> int:
        """The number of automaton states."""
        return len(self.edges)

    def describe(self) -> str:
        """A readable listing: one line per edge."""
        lines = [f"initial {self.initial}, accepting {sorted(self.accepting)}"]
        for q, es in enumerate(self.edges):
            for e in es:
                lines.append(f"  {q} -> {e.target} if {format_expr(e.guard)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class LtlProperty:
    """A named linear-time property. Exactly one of ``formula`` (an ``ltl`` block: the runs
    must satisfy it) and ``claim`` (a ``never`` claim: no run may be accepted by it) is set;
    ``text`` is the formula as written (for messages)."""

    name: str
    formula: Ltl | None = None
    span: SourceSpan | None = field(default=None, compare=False)
    claim: Automaton | None = None
    text: str = ""

    def __post_init__(self) -> None:
        if (self.formula is None) == (self.claim is None):
            raise ValueError("an LTL property has exactly one of a formula and a claim")
