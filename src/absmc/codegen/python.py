"""Compile a System once into generated Python source for fast concrete execution.

States are tuples of ints (one slot per variable, declaration order, bools as 0/1). The
generated module defines:

* ``successors(s) -> (steps, failures)`` (an :data:`~absmc.ir.steps.Expansion`): the enabled
  steps as ``(label, successor state)`` in command order, and the :class:`~absmc.ir.steps.Failure`
  s met. A label is a command index, or — when commands with ``exclusive`` set (Promela's
  ``atomic``) chain several commands into one step — a *chain label* ``>= len(commands)`` that
  :meth:`CompiledSystem.commands_of` turns back into the command indices. Model errors (division
  by zero, an assignment outside a finite ``overflow="error"`` range, a command's ``errors``
  condition) do not raise: they are returned as failures of property ``NO_MODEL_ERROR`` and the
  command yields no successor; a failed ``asserts`` condition is a failure of that ``assert``
  property, and the command still yields its successor. Nothing is kept between calls.
* timeout semantics: commands flagged ``"timeout"`` are tried only when no other command is
  enabled (SPIN's ``timeout``);
* exclusive control: after a command with ``exclusive = P`` only P's commands are tried from the
  reached state, which is not returned (not stored) unless P is blocked there; the chain ends at
  the first command without ``exclusive`` (SPIN's ``atomic``: intermediate states of an atomic
  sequence are not stored). A chain that comes back to a state it already passed is cut there
  (:attr:`CompiledSystem.cut_chains` counts the cuts).
* ``step(ci, s) -> (successor or None, failures)``: one command (no chaining), for replay.
* ``ok(s) -> bool``: every compiled state property holds in ``s`` (the fast path of property
  checking); ``violated(s) -> list[int]``: indices (into ``CompiledSystem.properties``) of
  violated ones (``assert`` properties are checked on transitions, see above).
* ``valid_end(s) -> bool``: ``s`` is a valid end state (not a deadlock when terminal).
* ``expr_fn(e)``: any IR expression as a function of the state, for engines that need more
  (predicate bit-vectors, abstraction functions).

Commands of one process that all test the same control variable against a constant (a program
counter) are dispatched on that variable's value, so a state only evaluates the guards of the
commands at its current location. The generated code agrees with :mod:`absmc.ir.evaluate`.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import CodeType
from typing import Any

from absmc.codegen.codecache import cached_compile
from absmc.codegen.plan import (
    Interval,
    chain_holders,
    choose_dispatch_var,
    dispatch_value,
    fits,
    guard_bounds,
    may_raise,
    runs,
    split_timeout,
    storable_stacks,
    strip_dispatch,
)
from absmc.ir.arrays import ArrayWrite, strided_slots
from absmc.ir.dependency import group_dependencies
from absmc.ir.depth import ExprDepth, check_depth
from absmc.ir.expr import Const, Expr, Op, Var, conj, conjuncts, subexpressions
from absmc.ir.intsem import RUNTIME
from absmc.ir.sorts import INT, BoolSort, RangeSort
from absmc.ir.steps import NO_FAILURES, Expansion, Failure, Failures, GroupDeps, State, Successors
from absmc.ir.system import NO_MODEL_ERROR, STATE_PROPERTY_KINDS, Command, Property, System
from absmc.ir.walker import ExprWalker

__all__ = ["CompiledSystem", "Expansion", "Failure", "State", "Successors", "compile_system"]


class PyExpr(ExprWalker[str]):
    """Translates IR expressions into Python source over local names ``v0, v1, ...`` (the
    index of the variable in ``index_of``); ``/``, ``%``, ``<<`` and ``>>`` become calls of
    :data:`absmc.ir.intsem.RUNTIME`'s functions. An iterative walk: any depth translates (without
    ``split``, Python's own ``compile`` refuses source nested ~200 parentheses deep).

    A product of two non-constant operands that both mention a variable of ``unbounded`` (the
    unbounded ``int`` variables) becomes ``_mul(a, b)``, which stops a product growing past
    :data:`absmc.ir.intsem.MAX_BITS` bits (``IntegerTooLarge``).

    With ``split``, a subexpression :data:`SPLIT_DEPTH` levels deep becomes a call of a helper
    function ``_dN(v3, v7, s)`` (over its variables, and the state ``s`` for indexed reads)
    whose definition goes to :attr:`helpers`, which the caller executes in the same namespace:
    the source of any expression then nests at most ``SPLIT_DEPTH`` levels (Python's parser
    refuses ~200 nested parentheses), and each call is evaluated exactly where its text would
    be, so short-circuit evaluation and exceptions are unchanged."""

    def __init__(
        self, index_of: dict[str, int], unbounded: frozenset[str] = frozenset(), split: bool = False
    ) -> None:
        super().__init__(transient=True)
        self.index_of = index_of
        self.unbounded = _Mentions(unbounded) if unbounded else None
        self.n_index = 0  # walrus names of computed array indices
        self.split = split
        #: module-level definitions of the helper functions of split expressions (source lines)
        self.helpers: list[str] = []
        self._calls: dict[str, str] = {}  # helper calls by the text they stand for
        self._depths: dict[int, int] = {}  # id of a result text -> its nesting depth

    def name(self, var: str) -> str:
        """The local name of variable ``var``."""
        return f"v{self.index_of[var]}"

    def __call__(self, e: Expr) -> str:
        """Python source of ``e``."""
        if isinstance(e, Var):
            return f"v{self.index_of[e.name]}"
        if not self.split:
            return self.walk(e)
        try:
            return self.walk(e)
        finally:
            self._depths = {}

    def _hoisted(self, args: list[str]) -> int:
        """Replace (in place) the arguments nested :data:`SPLIT_DEPTH` levels deep by calls of
        new helper functions; returns the depth of a node over the (new) arguments."""
        depths = self._depths
        deepest = 0
        for k, text in enumerate(args):
            d = depths.get(id(text), 0)
            if d >= SPLIT_DEPTH:
                call = self._calls.get(text)
                if call is None:
                    name = f"_d{next(_HELPER_IDS)}"
                    params = sorted(set(_VAR_NAME.findall(text)), key=lambda v: int(v[1:]))
                    if _STATE_READ.search(text):
                        params.append("s")
                    self.helpers += [f"def {name}({', '.join(params)}):", f"    return {text}"]
                    call = self._calls[text] = f"{name}({', '.join(params)})"
                args[k] = call
                d = 1
            deepest = max(deepest, d)
        return deepest + 1

    def walk_const(self, e: Const) -> str:
        out = str(e.value)
        if self.split:
            self._depths[id(out)] = 0
        return out

    def walk_var(self, e: Var) -> str:
        out = f"v{self.index_of[e.name]}"
        if self.split:
            self._depths[id(out)] = 0
        return out

    def walk_and(self, e: Op, a: list[str]) -> str:
        return "(" + " and ".join(a) + ")"

    def walk_or(self, e: Op, a: list[str]) -> str:
        return "(" + " or ".join(a) + ")"

    def walk_not(self, e: Op, a: list[str]) -> str:
        return f"(not {a[0]})"

    def walk_implies(self, e: Op, a: list[str]) -> str:
        return f"(not {a[0]} or {a[1]})"

    def walk_ite(self, e: Op, a: list[str]) -> str:
        # Python's conditional expression is right-associative: a chain of them in the else
        # branch needs no parentheses (Python's parser refuses ~200 nested ones)
        other = e.args[2]
        chained = isinstance(other, Op) and other.op == "ite" and a[2].startswith("(")
        els = a[2][1:-1] if chained else a[2]
        return f"({a[1]} if {a[0]} else {els})"

    def walk_select(self, e: Op, a: list[str]) -> str:
        # element i of the tuple, the last one out of range (ir.arrays): elements that are
        # state variables at evenly spaced positions are one indexed read of the state
        elems = e.args[1:]
        n = len(elems)
        i = a[0]
        if i.isidentifier() or i.lstrip("-").isdigit():
            test = f"0 <= {i} < {n}"
        else:
            self.n_index += 1
            name = f"_i{self.n_index}"
            test = f"0 <= ({name} := {i}) < {n}"
            i = name
        pos = strided_slots(elems, self.index_of)
        if pos is not None:
            base, stride = pos
            at = i if stride == 1 else f"{stride} * {i}"
            at = at if base == 0 else f"{base} + {at}"
            return f"(s[{at}] if {test} else {a[-1]})"
        if any(may_raise(x) for x in elems):  # lazily, as the case split evaluates
            out = a[-1]
            for k in range(n - 2, -1, -1):
                out = f"({a[1 + k]} if {i} == {k} else {out})"
            return f"({out} if {test} else {a[-1]})"
        return f"(({', '.join(a[1:])},)[{i}] if {test} else {a[-1]})"

    def walk_neg(self, e: Op, a: list[str]) -> str:
        return f"(-{a[0]})"

    def walk_bitnot(self, e: Op, a: list[str]) -> str:
        return f"(~{a[0]})"

    def walk_shl(self, e: Op, a: list[str]) -> str:
        return f"_shift({a[0]}, {a[1]}, True)"

    def walk_shr(self, e: Op, a: list[str]) -> str:
        return f"_shift({a[0]}, {a[1]}, False)"

    def walk_div(self, e: Op, a: list[str]) -> str:
        return f"_tdiv({a[0]}, {a[1]})"

    def walk_mod(self, e: Op, a: list[str]) -> str:
        return f"_tmod({a[0]}, {a[1]})"

    def walk_mul(self, e: Op, a: list[str]) -> str:
        big = self.unbounded
        if big is not None and all(not isinstance(x, Const) and big.walk(x) for x in e.args):
            return f"_mul({a[0]}, {a[1]})"
        return self.walk_op(e, a)

    def walk_op(self, e: Op, a: list[str]) -> str:
        # the remaining binary operators are spelled as in Python; a left-nested chain of
        # + and - (or of *) is written without inner parentheses (left-associative in Python
        # too), so long sums stay within Python's parser's nesting limit
        left = e.args[0]
        first = a[0]
        group = _CHAIN.get(e.op)
        if (
            group is not None
            and isinstance(left, Op)
            and _CHAIN.get(left.op) == group
            and first.startswith("(")  # not a call such as _mul(...)
        ):
            first = first[1:-1]
        return f"({first} {e.op} {a[1]})"


def _splitting(handler: Callable[[PyExpr, Op, list[str]], str]) -> Any:
    """``handler`` with :meth:`PyExpr._hoisted` applied to its arguments (when splitting)."""

    def split_handler(self: PyExpr, e: Op, args: list[str]) -> str:
        if not self.split:
            return handler(self, e, args)
        depth = self._hoisted(args)
        out = handler(self, e, args)
        self._depths[id(out)] = depth
        return out

    return split_handler


PyExpr._table = {o: _splitting(fn) for o, fn in PyExpr._table.items()}

#: a split :class:`PyExpr` moves a subexpression this deep into a helper function (each level
#: adds at most two parentheses to the source; Python's parser stops at 200)
SPLIT_DEPTH = 40
_HELPER_IDS = itertools.count(1)
_VAR_NAME = re.compile(r"\bv[0-9]+\b")
_STATE_READ = re.compile(r"\bs\[")


class _Mentions(ExprWalker[bool]):
    """Does an expression mention one of ``names``? (memoized across walks)"""

    def __init__(self, names: frozenset[str]) -> None:
        super().__init__(memoize_across_walks=True)
        self.names = names

    def walk_const(self, e: Const) -> bool:
        return False

    def walk_var(self, e: Var) -> bool:
        return e.name in self.names

    def walk_op(self, e: Op, a: list[bool]) -> bool:
        return any(a)


def unbounded_ints(system: System) -> frozenset[str]:
    """The variables of ``system`` of the unbounded sort ``int``."""
    return frozenset(v.name for v in system.variables if v.sort == INT)


#: the deepest expression the compiled back end accepts when called directly (models loaded
#: from files stop at :data:`absmc.ir.depth.MAX_EXPR_DEPTH`; helper functions of split
#: expressions call each other once per :data:`SPLIT_DEPTH` levels)
MAX_NESTING = 20_000


def system_depth(system: System) -> int:
    """The nesting depth of the deepest expression of ``system``. Raises ``ModelError`` at the
    command (or property) when it exceeds :data:`MAX_NESTING`."""
    return check_depth(system, MAX_NESTING)


def _compile_deep(source: str, name: str, depth: int) -> Any:
    """``compile(source)`` with Python's recursion limit raised for expressions ``depth``
    deep (its compiler recurses on the syntax tree; long sums are deep trees); a long source
    compiled before comes from the code cache (:mod:`absmc.codegen.codecache`)."""
    return cached_compile(source, name, lambda: _compile_now(source, name, depth))


def _compile_now(source: str, name: str, depth: int) -> CodeType:
    old = sys.getrecursionlimit()
    need = 4 * depth + 2000
    if need > old:
        sys.setrecursionlimit(need)
    try:
        return compile(source, name, "exec")
    finally:
        if need > old:
            sys.setrecursionlimit(old)


#: operators Python evaluates left to right at one precedence level, by group
_CHAIN = {"+": 0, "-": 0, "*": 1}


@dataclass(frozen=True)
class CompiledSystem:
    """The compiled form of a System (see module docstring); an implementation of the kernel's
    ``Semantics`` protocol (:mod:`absmc.kernel.model.semantics`). ``source`` is the generated code.

    Chain labels are *interned*: label ``len(commands) + k`` is the k-th distinct chain met so
    far (``chains[k]``). The table only grows, and a label never changes meaning, so any number
    of searches and replays may share one ``CompiledSystem`` (one thread at a time)."""

    system: System
    properties: tuple[Property, ...]
    source: str
    successors: Callable[[State], Expansion]
    ok: Callable[[State], bool]
    violated: Callable[[State], list[int]]
    valid_end: Callable[[State], bool]
    step: Callable[[int, State], tuple[State | None, Failures]]
    chains: list[tuple[int, ...]] = field(default_factory=list)
    #: False when no state property is compiled (``ok`` is then always true)
    state_checks: bool = True
    #: makes the fused breadth-first expander (see ``_Gen.expander``) when there are no state
    #: checks, else ``None``; generated and compiled on first use (:attr:`expand_level`)
    make_expander: Callable[[], Callable[..., tuple[int, int, list[Any]]]] | None = None
    _cuts: list[int] = field(default_factory=lambda: [0], repr=False)
    _deps: list[tuple[GroupDeps, ...]] = field(default_factory=list, repr=False)

    @cached_property
    def expand_level(self) -> Callable[..., tuple[int, int, list[Any]]] | None:
        """The fused breadth-first expander (``None`` with state checks): its source is
        generated on first use, as a search with a partial-order reduction or a state limit
        never calls it (the expander is as long as ``successors``: ~0.3 s of a pftp run)."""
        return None if self.make_expander is None else self.make_expander()

    @property
    def cut_chains(self) -> int:
        """How often an exclusive chain came back to a state it had passed and was cut there,
        over all successor computations so far (a chain whose every branch is cut yields no
        successor: a process looping forever inside ``atomic``)."""
        return self._cuts[0]

    @property
    def initial(self) -> State:
        """The initial state."""
        return self.system.initial_state()

    def initial_states(self) -> list[State]:
        """The initial states (one: every variable at its declared initial value)."""
        return [self.system.initial_state()]

    def commands_of(self, label: int) -> tuple[int, ...]:
        """The command indices a step label stands for (one for a plain command). Raises
        ``IndexError`` for a label no successor computation has handed out."""
        n = len(self.system.commands)
        return (label,) if label < n else self.chains[label - n]

    def describe_state(self, s: State) -> dict[str, int | bool]:
        """``{variable: value}`` of ``s`` (bools as Python bools)."""
        return self.system.state_dict(s)

    def describe_step(self, label: int) -> str:
        """The commands of step ``label`` as a trace shows them, joined by ``; ``."""
        return describe_commands(self.system, self.commands_of(label))

    @property
    def dependencies(self) -> tuple[GroupDeps, ...]:
        """Per command, its dependency information
        (:func:`absmc.ir.dependency.group_dependencies`; computed on first use)."""
        if not self._deps:
            self._deps.append(group_dependencies(self.system))
        return self._deps[0]

    def expr_fn(self, e: Expr) -> Callable[[State], Any]:
        """Compile one expression into a function of the state (raises ``ZeroDivisionError`` on
        division by zero)."""
        return compile_expr_fn(self.system, e)


def describe_commands(system: System, commands: Sequence[int]) -> str:
    """What a trace shows for a step of ``commands`` (indices into ``system.commands``): each
    command's source text when the front end gave one, else its IR text, joined by ``; ``."""
    texts = []
    for ci in commands:
        c = system.commands[ci]
        texts.append(c.source_text if c.source_text is not None else c.text())
    return "; ".join(texts)


def compile_expr_fn(system: System, e: Expr) -> Callable[[State], Any]:
    """``e`` as a Python function of a state tuple."""
    tr = PyExpr(dict(system.index_of), unbounded_ints(system), split=True)
    used = sorted({system.index_of[n] for n in _names(e)})
    body = "".join(f"    v{i} = s[{i}]\n" for i in used)
    src = f"def f(s):\n{body}    return {tr(e)}\n"
    src += "".join(line + "\n" for line in tr.helpers)
    ns: dict[str, Any] = dict(RUNTIME)
    exec(_compile_deep(src, "<absmc-expr>", ExprDepth().walk(e)), ns)
    fn: Callable[[State], Any] = ns["f"]
    return fn


#: runs of at least this many unchanged slots are copied from the old state as a slice
COPY_RUN = 4


def _tuple_display(slots: list[str]) -> str:
    """The new state tuple of ``slots`` (the Python text of each position's value, ``v<i>`` at
    an unchanged position ``i``): runs of :data:`COPY_RUN` or more unchanged positions become a
    starred slice of the old state ``s`` (``(*s[:12], 2, t0, *s[41:])``). As fast to build as
    the full display, and about a third of its compile time: pftp's ``successors`` carries
    ~1,500 such tuples of 78 slots."""
    n = len(slots)
    parts: list[str] = []
    i = 0
    while i < n:
        j = i
        while j < n and slots[j] == f"v{j}":
            j += 1
        if j - i >= COPY_RUN:
            parts.append(f"*s[{i or ''}:{j if j < n else ''}]")
        else:
            parts.extend(slots[i:j])
        if j < n:
            parts.append(slots[j])
        i = j + 1
    if len(parts) == 1:  # one slot, or the whole old state: a starred slice needs the comma
        return f"({parts[0]},)"
    return "(" + ", ".join(parts) + ")"


def _list_updates(slots: list[str], changed: list[int]) -> list[str]:
    """Statements updating list ``_l`` (a copy of the old state ``s``) at ``changed``; runs of
    positions that copy a shifted run of old slots (a channel receive) become one slice."""
    out: list[str] = []
    k = 0
    while k < len(changed):
        i = changed[k]
        src = slots[i]
        d = int(src[1:]) - i if src[:1] == "v" and src[1:].isdigit() else None
        j = k
        while (
            d is not None
            and j + 1 < len(changed)
            and changed[j + 1] == changed[j] + 1
            and slots[changed[j + 1]] == f"v{changed[j + 1] + d}"
        ):
            j += 1
        if d is not None and j > k:
            a, b = i, changed[j] + 1
            out.append(f"_l[{a}:{b}] = s[{a + d}:{b + d}]")
        else:
            out.append(f"_l[{i}] = {src}")
        k = j + 1
    return out


def _names(e: Expr) -> set[str]:
    return {x.name for x in subexpressions(e) if isinstance(x, Var)}


class _Gen:
    def __init__(self, system: System, props: Sequence[Property]) -> None:
        self.system = system
        self.tr = PyExpr(dict(system.index_of), unbounded_ints(system), split=True)
        self.lines: list[str] = []
        self.n = len(system.variables)
        self.proc_ids = {p.name: k for k, p in enumerate(system.processes)}
        self.prop_names = {p.name for p in props if p.kind == "assert"}
        self.asserted = {p.name: p for p in props if p.kind == "assert"}
        self.uses_exclusive = any(c.exclusive for c in system.commands)
        self.n_stores = 0

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def text(self) -> str:
        """The module source generated so far: the lines, then the helper functions."""
        return "\n".join(self.lines + self.tr.helpers) + "\n"

    def unpack(self, indent: int) -> None:
        if self.n == 0:
            return
        names = ", ".join(f"v{i}" for i in range(self.n))
        self.emit(indent, f"{names}{',' if self.n == 1 else ''} = s")

    def sink(self, c: Command, tup: str, mode: str) -> list[str]:
        """The statements (relative indentation by 4 spaces) that deliver successor ``tup``
        of command ``c``: into ``out`` (``main``), as ``(label, state, fn)`` (``fn``), or
        straight into the search's store (``fused``, see ``expander``)."""
        if mode == "fn":
            f = f"_fn{self.proc_ids[c.exclusive]}" if c.exclusive is not None else "None"
            return [f"app(({c.index}, {tup}, {f}))"]
        if mode == "fused":
            insert = "seen_add(t); p_app(sid); v_app({}); n_app(t)"
            if c.exclusive is not None:
                fn = f"_fn{self.proc_ids[c.exclusive]}"
                return [
                    f"_tmp = []; _e += _close(({c.index},), {tup}, {fn}, _tmp); ex = 1",
                    "for _ci, t in _tmp:",
                    "    k += 1",
                    "    if t not in seen:",
                    "        " + insert.format("_ci") + "; size += 1",
                ]
            # one hash per transition: add, and see whether the set grew
            return [
                f"t = {tup}; k += 1; seen_add(t)",
                "if len(seen) != size:",
                f"    size += 1; p_app(sid); v_app({c.index}); n_app(t)",
            ]
        if c.exclusive is not None:
            # `ex` records that a command was enabled even if its chain ends nowhere new
            return [
                f"_e += _close(({c.index},), {tup}, _fn{self.proc_ids[c.exclusive]}, out); ex = 1"
            ]
        return [f"app(({c.index}, {tup}))"]

    def emit_all(self, indent: int, lines: list[str]) -> None:
        for ln in lines:
            extra = (len(ln) - len(ln.lstrip(" "))) // 4
            self.emit(indent + extra, ln.lstrip(" "))

    def command(
        self, indent: int, c: Command, guard: Expr, var: str | None, value: int, mode: str
    ) -> None:
        sys = self.system
        tr = self.tr
        exprs = [guard, *(e for _, e in c.updates), *(e for _, e in c.asserts)]
        exprs += [e for e, _ in c.errors]
        raises = any(may_raise(e) for e in exprs)
        note = f"{c.process}: {c.source_text or c.text()}".replace("\n", " ")
        self.emit(indent, f"# {note[:100]}")
        base = indent
        if raises:
            self.emit(indent, "try:")
            indent += 1
        errors = [
            (list(conjuncts(cond if var is None else strip_dispatch(cond, var, value))), msg)
            for cond, msg in c.errors
        ]
        indent = self.tests(indent, c.index, errors, list(conjuncts(guard)))
        slots = [f"v{i}" for i in range(self.n)]
        checks: list[tuple[str, str, RangeSort]] = []
        bounds = guard_bounds(sys, c.guard)
        updates, stacks = self.split_writes(c, bounds)
        for k, (name, rhs) in enumerate(updates):
            i = sys.index_of[name]
            sort = sys.by_name[name].sort
            src = tr(rhs)
            if isinstance(sort, BoolSort) and not isinstance(rhs, (Var, Const)):
                src = f"(1 if {src} else 0)"
            in_range = not isinstance(sort, RangeSort) or fits(sys, rhs, sort, bounds)
            if in_range and isinstance(rhs, (Var, Const)):
                slots[i] = src  # a constant or a copy goes straight into the new tuple
                continue
            tmp = f"t{k}"
            self.emit(indent, f"{tmp} = {src}")
            if isinstance(sort, RangeSort) and not in_range:
                if sort.overflow == "wrap":
                    # the test is cheaper than the arithmetic in the common in-range case
                    self.emit(indent, f"if not {sort.lo} <= {tmp} <= {sort.hi}:")
                    if sort.lo == 0:
                        self.emit(indent + 1, f"{tmp} = {tmp} % {sort.size}")
                    else:
                        self.emit(
                            indent + 1, f"{tmp} = ({tmp} - {sort.lo}) % {sort.size} + {sort.lo}"
                        )
                else:
                    checks.append((tmp, name, sort))
            slots[i] = tmp
        for name, cond in c.asserts:
            if name in self.prop_names:
                shown = self.asserted[name].shown(cond)  # this process's instance
                self.emit(indent, f"if not {tr(cond)}:")
                self.emit(
                    indent + 1,
                    f"_e += (_F({c.index}, {('assertion violated: ' + shown)!r}, {name!r}),)",
                )
        tup = _tuple_display(slots)
        changed = [i for i in range(self.n) if slots[i] != f"v{i}"]
        if stacks:
            # indexed stores (array writes with a computed index) into a copy of the state
            sets = "; ".join(_list_updates(slots, changed))
            self.emit(indent, f"_l = list(s); {sets}" if sets else "_l = list(s)")
            self.stores(indent, stacks)
            tup = "tuple(_l)"
        elif self.n >= 32 and 4 * len(changed) < self.n:
            # a wide state with few changes: copying the old tuple is cheaper than rebuilding
            sets = "; ".join(_list_updates(slots, changed))
            self.emit(indent, f"_l = list(s); {sets}" if sets else "_l = s")
            tup = "tuple(_l)" if sets else "s"
        if checks:
            ok = " and ".join(f"{s.lo} <= {t} <= {s.hi}" for t, _, s in checks)
            self.emit(indent, f"if {ok}:")
            self.emit_all(indent + 1, self.sink(c, tup, mode))
            self.emit(indent, "else:")
            args = ", ".join(f"({t}, {name!r}, {s.lo}, {s.hi})" for t, name, s in checks)
            self.emit(indent + 1, f"_e += (_range_error({c.index}, [{args}]),)")
        else:
            self.emit_all(indent, self.sink(c, tup, mode))
        if raises:
            self.emit(base, "except ZeroDivisionError:")
            self.emit(base + 1, f"_e += (_F({c.index}, 'division by zero', {NO_MODEL_ERROR!r}),)")

    def tests(
        self, indent: int, ci: int, errors: list[tuple[list[Expr], str]], guard: list[Expr]
    ) -> int:
        """Emit the model-error tests of command ``ci`` (in order: the first that holds is
        reported) and then its guard; returns the indentation of the command's effect. The
        errors at the end of the list that start with the guard's first conjunct are tested
        under one test of it, recursively (a Promela statement's bounds errors repeat the
        conditions before them: each is evaluated once instead of once per error). Only a
        conjunct that cannot divide by zero is shared (``&&`` evaluates left to right, so the
        tests and their order are the original ones)."""
        tr = self.tr
        kw = "if"
        refuted: set[Expr] = set()  # one-conjunct error conditions found false on the way here
        while True:
            head = guard[0] if guard and not may_raise(guard[0]) else None
            j = len(errors)
            while head is not None and j > 0 and errors[j - 1][0][:1] == [head]:
                j -= 1
            for parts, msg in errors[:j]:
                if refuted.intersection(parts) and not any(may_raise(x) for x in parts):
                    continue  # false here (a repeated bounds check of the same index)
                self.emit(indent, f"{kw} {tr(conj(parts))}:")
                self.emit(indent + 1, f"_e += (_F({ci}, {msg!r}, {NO_MODEL_ERROR!r}),)")
                kw = "elif"
                if len(parts) == 1:
                    refuted.add(parts[0])
            if head is None or j == len(errors):
                break
            self.emit(indent, f"{kw} {tr(head)}:")
            indent += 1
            kw = "if"
            errors = [(parts[1:], msg) for parts, msg in errors[j:]]
            guard = guard[1:]
        if kw == "elif":
            self.emit(indent, "else:")
            indent += 1
        g = tr(conj(guard))
        if g != "1":
            self.emit(indent, f"if {g}:")
            indent += 1
        return indent

    def split_writes(
        self, c: Command, bounds: dict[str, Interval]
    ) -> tuple[list[tuple[str, Expr]], list[list[ArrayWrite]]]:
        """The command's updates without the array writes emitted as indexed stores
        (:func:`absmc.codegen.plan.storable_stacks`), and those writes: here a write is stored
        so when its variables wrap or its value fits them."""

        def write_ok(stack: list[ArrayWrite], sort: RangeSort) -> bool:
            return sort.overflow == "wrap" or all(
                fits(self.system, w.value, sort, bounds) for w in stack
            )

        return storable_stacks(self.system, c, write_ok)

    def stores(self, indent: int, stacks: list[list[ArrayWrite]]) -> None:
        """``_l[position] = value`` for each write of ``stacks`` whose index is in range (in
        order: a later write to the same position wins), values wrapped into the variables'
        range; ``_l`` is the new state as a list, the expressions read the old state."""
        sys = self.system
        for stack in stacks:
            sort = sys.by_name[stack[0].names[0]].sort
            assert isinstance(sort, RangeSort)
            for w in stack:
                self.n_stores += 1
                k = f"_w{self.n_stores}"
                self.emit(indent, f"{k} = {self.tr(w.index)}")
                off = w.base - w.stride * w.first
                at = f"{off} + {k}" if w.stride == 1 else f"{off} + {w.stride} * {k}"
                self.emit(indent, f"if {w.first} <= {k} < {w.first + w.length}:")
                src = self.tr(w.value)
                if fits(sys, w.value, sort, {}):
                    self.emit(indent + 1, f"_l[{at}] = {src}")
                    continue
                self.emit(indent + 1, f"_x = {src}")
                wrapped = (
                    f"_x % {sort.size}"
                    if sort.lo == 0
                    else f"(_x - {sort.lo}) % {sort.size} + {sort.lo}"
                )
                self.emit(
                    indent + 1,
                    f"_l[{at}] = _x if {sort.lo} <= _x <= {sort.hi} else {wrapped}",
                )

    def block(self, indent: int, cmds: Sequence[Command], mode: str) -> None:
        """Code for ``cmds`` (in order), dispatched on program counters where possible."""
        sys = self.system
        for run in runs(cmds):
            var = choose_dispatch_var(sys, run)
            if var is None:
                self.factored(indent, [(c, list(conjuncts(c.guard))) for c in run], None, 0, mode)
                continue
            groups: dict[int, list[Command]] = {}
            for c in run:
                value = dispatch_value(c, var)
                assert value is not None
                groups.setdefault(value, []).append(c)
            # order is kept: in a given state only the commands of one group can be enabled,
            # and each group lists its commands in their original order
            pv = f"v{sys.index_of[var]}"
            first = True
            for value, grp in groups.items():
                self.emit(indent, f"{'if' if first else 'elif'} {pv} == {value}:")
                first = False
                items = [(c, list(conjuncts(strip_dispatch(c.guard, var, value)))) for c in grp]
                self.factored(indent + 1, items, var, value, mode)

    def factored(
        self,
        indent: int,
        items: Sequence[tuple[Command, list[Expr]]],
        var: str | None,
        value: int,
        mode: str,
    ) -> None:
        """Emit commands in order; consecutive commands whose guards start with the same
        conjunct share one test of it (a decision tree over guard prefixes)."""
        i = 0
        while i < len(items):
            c, parts = items[i]
            head = parts[0] if parts and not c.errors else None
            j = i + 1
            if head is not None and not may_raise(head):
                while (
                    j < len(items)
                    and not items[j][0].errors
                    and items[j][1]
                    and items[j][1][0] == head
                ):
                    j += 1
            if j - i >= 2:
                assert head is not None
                self.emit(indent, f"if {self.tr(head)}:")
                self.factored(indent + 1, [(c2, p2[1:]) for c2, p2 in items[i:j]], var, value, mode)
                i = j
                continue
            self.command(indent, c, conj(parts), var, value, mode)
            i += 1

    def successors(self) -> None:
        sys = self.system
        normal, timeout = split_timeout(sys.commands)
        self.emit(0, "def successors(s):")
        self.unpack(1)
        self.emit(1, "out = []")
        self.emit(1, "app = out.append")
        self.emit(1, "ex = 0")
        self.emit(1, "_e = ()")
        self.block(1, normal, "main")
        if timeout:
            self.emit(1, "if not out and not ex:")
            self.block(2, timeout, "main")
        self.emit(1, "return out, _e")
        # one-step successors of the processes that can hold exclusive control
        self.process_fns(chain_holders(sys))

    def expander(self) -> None:
        """``_expand(frontier, sid, seen, p_app, v_app, n_app)``: the successors of a list of
        states put straight into a breadth-first search's store (no successor list, no pairs):
        each new state is added to ``seen`` and appended with its parent id and command label.
        Returns ``(last sid, transitions, flagged)``; ``flagged`` lists ``(state, sid,
        successors, errors)`` for the states the search must look at (no successor, or errors
        met). Only generated without state properties (there is nothing to check on arrival)."""
        sys = self.system
        normal, timeout = split_timeout(sys.commands)
        self.emit(0, "def _expand(frontier, sid, seen, p_app, v_app, n_app):")
        self.emit(1, "seen_add = seen.add")
        self.emit(1, "size = len(seen)")
        self.emit(1, "trans = 0")
        self.emit(1, "flagged = []")
        self.emit(1, "for s in frontier:")
        self.emit(2, "sid += 1")
        self.unpack(2)
        self.emit(2, "k = 0")
        self.emit(2, "ex = 0")
        self.emit(2, "_e = ()")
        self.block(2, normal, "fused")
        if timeout:
            self.emit(2, "if not k and not ex:")
            self.block(3, timeout, "fused")
        self.emit(2, "trans += k")
        self.emit(2, "if not k or _e:")
        self.emit(3, "flagged.append((s, sid, k, _e))")
        self.emit(1, "return sid, trans, flagged")

    def process_fns(self, names: Sequence[str]) -> None:
        """``_fn<k>(s, tmo)``: one-step successors ``(label, state, fn)`` of each named
        process (for exclusive chains, and for replay), and ``_PROC_FN``: command -> its fn."""
        sys = self.system
        for name in names:
            proc = next(p for p in sys.processes if p.name == name)
            k = self.proc_ids[proc.name]
            mine = [c for c in sys.commands if c.process == proc.name]
            self.emit(0, f"def _fn{k}(s, tmo=False):")
            self.unpack(1)
            self.emit(1, "out = []")
            self.emit(1, "app = out.append")
            self.emit(1, "_e = ()")
            nmine, tmine = split_timeout(mine)
            self.block(1, nmine, "fn")
            if tmine:
                self.emit(1, "if tmo:")
                self.block(2, tmine, "fn")
            self.emit(1, "return out, _e")
        chosen = set(names)
        self.emit(0, "_PROC_FN = {")
        for c in sys.commands:
            if c.process in chosen:
                self.emit(1, f"{c.index}: _fn{self.proc_ids[c.process]},")
        self.emit(0, "}")

    def properties(self, props: Sequence[Property]) -> None:
        sys = self.system
        tr = self.tr
        props = [p for p in props if p.kind in STATE_PROPERTY_KINDS]
        used = sorted({sys.index_of[n] for p in props for n in _names(p.expr)})
        self.emit(0, "def ok(s):")
        for i in used:
            self.emit(1, f"v{i} = s[{i}]")
        parts = []
        for p in props:
            x = tr(p.expr)
            parts.append(x if p.kind == "invariant" else f"not {x}")
        if any(may_raise(p.expr) for p in props):
            self.emit(1, "try:")
            self.emit(2, f"return {' and '.join(parts) or 'True'}")
            self.emit(1, "except ZeroDivisionError:")
            self.emit(2, "return False")
        else:
            self.emit(1, f"return {' and '.join(parts) or 'True'}")

    def violated(self, props: Sequence[Property]) -> None:
        sys = self.system
        tr = self.tr
        used = sorted(
            {
                sys.index_of[n]
                for p in props
                if p.kind in STATE_PROPERTY_KINDS
                for n in _names(p.expr)
            }
        )
        self.emit(0, "def violated(s):")
        for i in used:
            self.emit(1, f"v{i} = s[{i}]")
        self.emit(1, "out = []")
        for k, p in enumerate(props):
            if p.kind not in STATE_PROPERTY_KINDS:
                continue
            x = tr(p.expr)
            bad = f"not {x}" if p.kind == "invariant" else x
            self.emit(1, "try:")
            self.emit(2, f"if {bad}:")
            self.emit(3, f"out.append({k})")
            self.emit(1, "except ZeroDivisionError:")
            self.emit(2, f"out.append({k})")
        self.emit(1, "return out")

    def valid_end(self) -> None:
        sys = self.system
        self.emit(0, "def valid_end(s):")
        if sys.valid_end is None:
            self.emit(1, "return False")
            return
        for i in sorted({sys.index_of[n] for n in _names(sys.valid_end)}):
            self.emit(1, f"v{i} = s[{i}]")
        self.emit(1, f"return bool({self.tr(sys.valid_end)})")


def compile_system(system: System, properties: Sequence[Property] | None = None) -> CompiledSystem:
    """Generate, compile and load the successor, property and end-state functions of ``system``.

    ``properties`` selects which properties ``ok``/``violated`` and the ``asserts`` checks of
    commands report (default: all of the System's). The result's ``source`` holds the generated
    Python for inspection.
    """
    props = tuple(system.properties if properties is None else properties)
    depth = system_depth(system)
    gen = _Gen(system, props)
    gen.successors()
    fused = not any(p.kind in STATE_PROPERTY_KINDS for p in props)
    gen.properties(props)
    gen.violated(props)
    gen.valid_end()
    source = gen.text()
    chains: list[tuple[int, ...]] = []
    chain_ids: dict[tuple[int, ...], int] = {}
    ncmd = len(system.commands)
    cuts = [0]

    def range_error(ci: int, checks: list[tuple[int, str, int, int]]) -> Failure:
        for value, name, lo, hi in checks:
            if not lo <= value <= hi:
                return Failure(
                    ci, f"value {value} assigned to {name} is outside {lo}..{hi}", NO_MODEL_ERROR
                )
        raise AssertionError("range_error called for values in range")

    def intern(chain: tuple[int, ...]) -> int:
        if len(chain) == 1:
            return chain[0]
        k = chain_ids.get(chain)
        if k is None:
            k = chain_ids[chain] = ncmd + len(chains)
            chains.append(chain)
        return k

    def close(
        chain: tuple[int, ...], t: State, fn: Callable[..., Any], out: Successors
    ) -> Failures:
        """Follow exclusive control from ``t`` (reached by ``chain``): see the module doc.
        Returns the failures met on the way, labelled by their chains."""
        stack = [(chain, t, fn)]
        seen = {(t, fn)}
        failures: Failures = NO_FAILURES
        while stack:
            ch, st, f = stack.pop()
            nxt, errs = f(st)
            if errs:
                failures += tuple(Failure(intern((*ch, e[0])), e[1], e[2]) for e in errs)
            if not nxt:
                out.append((intern(ch), st))
                continue
            for ci, t2, f2 in reversed(nxt):
                if f2 is None:
                    out.append((intern((*ch, ci)), t2))
                elif (t2, f2) not in seen:
                    seen.add((t2, f2))
                    stack.append(((*ch, ci), t2, f2))
                else:
                    cuts[0] += 1
        return failures

    ns: dict[str, Any] = dict(RUNTIME)
    ns.update({"_F": Failure, "_range_error": range_error, "_close": close})
    code = _compile_deep(source, f"<absmc-compiled {system.name or 'system'}>", depth)
    exec(code, ns)
    lazy: dict[str, dict[int, Callable[..., Any]]] = {}

    def load_more(emit: Callable[[_Gen], None], name: str) -> None:
        # code generated after the module (on first use) into the same namespace; its
        # _fn<k> names are the module's (by process), its helpers' names are new
        more = _Gen(system, props)
        emit(more)
        exec(_compile_deep(more.text(), name, depth), ns)

    def make_expander() -> Callable[..., tuple[int, int, list[Any]]]:
        load_more(_Gen.expander, f"<absmc-compiled {system.name or 'system'} expander>")
        fn: Callable[..., tuple[int, int, list[Any]]] = ns["_expand"]
        return fn

    def step(ci: int, s: State) -> tuple[State | None, Failures]:
        if "fns" not in lazy:  # generated on first use (traces): every process's one-step fn
            load_more(
                lambda g: g.process_fns([p.name for p in system.processes]),
                "<absmc-compiled steps>",
            )
            lazy["fns"] = ns["_PROC_FN"]
        succ, errs = lazy["fns"][ci](s, True)
        mine = tuple(e for e in errs if e[0] == ci)
        for c, t, _f in succ:
            if c == ci:
                return t, mine
        return None, mine

    return CompiledSystem(
        system=system,
        properties=props,
        source=source,
        successors=ns["successors"],
        ok=ns["ok"],
        violated=ns["violated"],
        valid_end=ns["valid_end"],
        chains=chains,
        step=step,
        state_checks=not fused,
        make_expander=make_expander if fused else None,
        _cuts=cuts,
    )
