"""The code-generation plan both back ends follow (the generated Python of
:mod:`absmc.codegen.python` and the C of :mod:`absmc.native.cgen`), so they generate the same
semantics from one set of decisions:

* **dispatch**: consecutive commands of one process (:func:`runs`) that all compare one control
  variable with a constant (:func:`choose_dispatch_var`, :func:`dispatch_value`) are dispatched
  on its value (``if``/``elif`` chains in Python, ``switch`` in C), the tested conjunct removed
  from each guard (:func:`strip_dispatch`);
* **timeouts and exclusive chains** (:func:`split_timeout`, :func:`chain_holders`): commands
  flagged ``"timeout"`` are tried only when no other command is enabled and no exclusive chain
  started (SPIN's ``timeout``); after a command with ``exclusive = P`` only P's non-timeout
  commands are tried (each back end's runtime follows the chain depth-first and cuts it at a
  repeated (state, process) pair);
* **array writes** (:func:`storable_stacks`): which per-element writes of a command become
  indexed stores (:func:`absmc.ir.arrays.array_writes`), under each back end's own condition
  on a write;
* **intervals** (:func:`op_interval`, :func:`interval`, :func:`guard_bounds`, :func:`fits`):
  one interval analysis, exact over the integers: the Python back end leaves out range checks
  a value cannot fail, the C back end also picks each expression's C type from it.

:func:`may_raise` tells where evaluation can divide by zero (what a back end may not evaluate
eagerly or test out of order). The reference semantics (:mod:`absmc.ir.evaluate`,
``codegen.reference.ReferenceSemantics``) keep their own reading of the rules: they are the
oracle the generated code is tested against.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from absmc.ir.arrays import ArrayWrite, array_writes
from absmc.ir.expr import Const, Expr, Op, Var, conj, conjuncts, subexpressions
from absmc.ir.intsem import MAX_SHIFT
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import Command, System
from absmc.ir.walker import ExprWalker

__all__ = [
    "FULL64",
    "Interval",
    "chain_holders",
    "choose_dispatch_var",
    "dispatch_value",
    "fits",
    "guard_bounds",
    "interval",
    "may_raise",
    "op_interval",
    "runs",
    "split_timeout",
    "storable_stacks",
    "strip_dispatch",
    "var_interval",
]


# -- dispatch ----------------------------------------------------------------------------


def may_raise(e: Expr) -> bool:
    """True when evaluating ``e`` can divide by zero (a ``/`` or ``%`` by a non-constant or by
    the constant 0)."""
    for x in subexpressions(e):
        if isinstance(x, Op) and x.op in ("/", "%"):
            d = x.args[1]
            if not isinstance(d, Const) or d.value == 0:
                return True
    return False


def dispatch_value(c: Command, var: str) -> int | None:
    """The constant ``var`` is compared with in a top-level conjunct of the guard — only when
    no conjunct before it can raise (``&&`` evaluates left to right: testing the program
    counter first must not skip a division by zero the guard would meet)."""
    for part in conjuncts(c.guard):
        if may_raise(part):
            return None
        if isinstance(part, Op) and part.op == "==":
            a, b = part.args
            if isinstance(a, Var) and a.name == var and isinstance(b, Const):
                return b.value
            if isinstance(b, Var) and b.name == var and isinstance(a, Const):
                return a.value
    return None


def strip_dispatch(guard: Expr, var: str, value: int) -> Expr:
    """``guard`` without its top-level conjuncts ``var == value`` (the dispatch tested them)."""
    kept = []
    for part in conjuncts(guard):
        if isinstance(part, Op) and part.op == "==":
            a, b = part.args
            if (
                isinstance(a, Var) and a.name == var and isinstance(b, Const) and b.value == value
            ) or (
                isinstance(b, Var) and b.name == var and isinstance(a, Const) and a.value == value
            ):
                continue
        kept.append(part)
    return conj(kept)


def choose_dispatch_var(system: System, cmds: Sequence[Command]) -> str | None:
    """A control variable every command in ``cmds`` compares with a constant at top level
    (preferring the process's declared program counter), or ``None``."""
    if len(cmds) < 2:
        return None
    candidates: list[str] = []
    proc = next((p for p in system.processes if p.name == cmds[0].process), None)
    if proc is not None and proc.pc is not None:
        candidates.append(proc.pc)
    for part in conjuncts(cmds[0].guard):
        if isinstance(part, Op) and part.op == "==":
            for x in part.args:
                if isinstance(x, Var) and x.name not in candidates:
                    candidates.append(x.name)
    for name in candidates:
        v = system.by_name.get(name)
        if v is None or not v.is_control:
            continue
        if all(dispatch_value(c, name) is not None for c in cmds):
            return name
    return None


def runs(cmds: Sequence[Command]) -> list[list[Command]]:
    """Consecutive runs of commands of one process, in order."""
    out: list[list[Command]] = []
    for c in cmds:
        if out and out[-1][0].process == c.process:
            out[-1].append(c)
        else:
            out.append([c])
    return out


# -- timeouts and exclusive chains -------------------------------------------------------


def split_timeout(cmds: Sequence[Command]) -> tuple[list[Command], list[Command]]:
    """``(normal, timeout)``: the commands of ``cmds`` without and with the ``"timeout"`` flag,
    in order. A back end tries the timeout commands only when no normal command was enabled
    and no exclusive chain started (a chain is a step even when it ends nowhere new)."""
    normal = [c for c in cmds if "timeout" not in c.flags]
    timeout = [c for c in cmds if "timeout" in c.flags]
    return normal, timeout


def chain_holders(system: System) -> list[str]:
    """The processes that can hold exclusive control (some command's ``exclusive``), in
    declaration order: each gets a one-step function over its own commands, which a chain
    follows (timeout commands of the holder only where no other of its commands is enabled)."""
    targets = {c.exclusive for c in system.commands if c.exclusive is not None}
    return [p.name for p in system.processes if p.name in targets]


# -- array writes --------------------------------------------------------------------------


def storable_stacks(
    system: System, c: Command, write_ok: Callable[[list[ArrayWrite], RangeSort], bool]
) -> tuple[list[tuple[str, Expr]], list[list[ArrayWrite]]]:
    """The updates of ``c`` without the array writes stored by index, and those writes (stacks
    of :func:`absmc.ir.arrays.array_writes`, innermost first; the stored variables keep their
    innermost ``rest``). A stack is stored when its variables share one range sort, nothing in
    it can divide by zero (stores evaluate eagerly what the per-element form evaluates lazily)
    and ``write_ok(stack, sort)`` (the back end's own condition: value ranges, layout)."""
    if len(c.updates) < 4:
        return list(c.updates), []
    _plain, stacks = array_writes(c.updates, system.index_of)
    kept: list[list[ArrayWrite]] = []
    rests: dict[str, Expr] = {}
    for stack in stacks:
        sorts = {system.by_name[n].sort for n in stack[0].names}
        sort = next(iter(sorts))
        if len(sorts) != 1 or not isinstance(sort, RangeSort):
            continue
        if any(may_raise(x) for w in stack for x in (w.index, w.value, *w.rests)):
            continue
        if write_ok(stack, sort):
            kept.append(stack)
            rests.update(zip(stack[0].names, stack[0].rests, strict=True))
    if not kept:
        return list(c.updates), []
    out = [(n, e) for n, e in c.updates if n not in rests]
    out += [(n, rests[n]) for n, _ in c.updates if n in rests]
    return out, kept


# -- intervals -------------------------------------------------------------------------------

Interval = tuple[int, int]

#: the values of a 64-bit signed word (what the C back end computes an unbounded ``int`` in)
FULL64: Interval = (-(1 << 63), (1 << 63) - 1)

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def guard_bounds(system: System, guard: Expr) -> dict[str, Interval]:
    """Intervals of range variables implied by the top-level conjuncts ``x op c`` (or
    ``c op x``) of ``guard``, intersected with their sorts."""
    out: dict[str, Interval] = {}
    for part in conjuncts(guard):
        if not (isinstance(part, Op) and part.op in _FLIP):
            continue
        a, b = part.args
        o: str = part.op
        if isinstance(b, Var) and isinstance(a, Const):
            a, b, o = b, a, _FLIP[o]
        if not (isinstance(a, Var) and isinstance(b, Const)):
            continue
        sort = system.by_name[a.name].sort
        if not isinstance(sort, RangeSort):
            continue
        lo, hi = out.get(a.name, (sort.lo, sort.hi))
        c = b.value
        if o == "<":
            hi = min(hi, c - 1)
        elif o == "<=":
            hi = min(hi, c)
        elif o == ">":
            lo = max(lo, c + 1)
        elif o == ">=":
            lo = max(lo, c)
        else:
            lo, hi = max(lo, c), min(hi, c)
        out[a.name] = (lo, hi)
    return out


def var_interval(system: System, name: str, bounds: dict[str, Interval]) -> Interval | None:
    """The values of variable ``name``: ``bounds`` (e.g. from the guard), else its range sort,
    ``(0, 1)`` for a bool, ``None`` for an unbounded ``int``."""
    if name in bounds:
        return bounds[name]
    s = system.by_name[name].sort
    if isinstance(s, RangeSort):
        return (s.lo, s.hi)
    return (0, 1) if isinstance(s, BoolSort) else None


def interval(system: System, e: Expr, bounds: dict[str, Interval]) -> Interval | None:
    """An interval containing every value of ``e`` when the variables lie in ``bounds`` (or
    their sorts: :func:`var_interval`), by :func:`op_interval` at each operator; ``None``
    when it depends on an unbounded ``int``."""
    return _Intervals(system, bounds).walk(e)


class _Intervals(ExprWalker[Interval | None]):
    """:func:`interval` as a walk (any depth)."""

    def __init__(self, system: System, bounds: dict[str, Interval]) -> None:
        super().__init__()
        self.system = system
        self.bounds = bounds

    def walk_const(self, e: Const) -> Interval | None:
        return (e.value, e.value)

    def walk_var(self, e: Var) -> Interval | None:
        return var_interval(self.system, e.name, self.bounds)

    def walk_op(self, e: Op, a: list[Interval | None]) -> Interval | None:
        o = str(e.op)
        if o in _TRUTH_VALUED:
            return (0, 1)
        used = a[1:] if o in ("ite", "select") else a  # not the condition, not the index
        if any(x is None for x in used):
            return None
        return op_interval(o, [x or (0, 1) for x in a])


#: operators whose values are 0 and 1 whatever their operands'
_TRUTH_VALUED = frozenset(["==", "!=", "<", "<=", ">", ">=", "&&", "||", "!", "=>"])


def fits(
    system: System, e: Expr, sort: RangeSort, bounds: dict[str, Interval] | None = None
) -> bool:
    """``e`` is known to lie in ``sort``'s range, by interval arithmetic over the variables'
    ranges narrowed by ``bounds`` (e.g. from the command's guard)."""
    iv = interval(system, e, bounds or {})
    return iv is not None and sort.lo <= iv[0] and iv[1] <= sort.hi


def _pow2_bound(iv: Interval) -> Interval:
    """An interval ``[-2^k, 2^k - 1]`` containing ``iv`` (what bitwise results stay within)."""
    m = max(abs(iv[0]), abs(iv[1]) + 1)
    k = m.bit_length()
    return (-(1 << k), (1 << k) - 1)


def _hull(points: Sequence[int]) -> Interval:
    return (min(points), max(points))


#: shift counts past this give the same result as this one for 128-bit operands (>> only;
#: wider operands: their bit length)
_SHR_CAP = 130


def _shl_interval(x: Interval, y: Interval) -> Interval:
    """Values of ``x << y`` under :func:`absmc.ir.intsem.shl` (a count below 0 or above
    ``MAX_SHIFT`` gives 0)."""
    lo, hi = max(y[0], 0), min(y[1], MAX_SHIFT)
    pts = [0] if y[0] < 0 or y[1] > MAX_SHIFT or lo > hi else []
    if lo <= hi:
        pts += [x[0] << lo, x[0] << hi, x[1] << lo, x[1] << hi]
    return _hull(pts)


def _shr_interval(x: Interval, y: Interval) -> Interval:
    """Values of ``x >> y`` (arithmetic; a negative count gives 0)."""
    cap = max(_SHR_CAP, max(abs(x[0]), abs(x[1])).bit_length() + 2)  # sound past 128 bits
    lo, hi = max(y[0], 0), min(max(y[1], 0), cap)
    pts = [0] if y[0] < 0 else []
    if y[1] >= 0:
        pts += [x[0] >> lo, x[0] >> hi, x[1] >> lo, x[1] >> hi]
    return _hull(pts)


def op_interval(o: str, ivs: Sequence[Interval]) -> Interval:
    """The values of operator ``o`` (an :class:`~absmc.ir.expr.Operator` spelling) applied to
    operands with values ``ivs`` (exact integers: no word size; a division by zero is not a
    value). Comparisons and connectives give ``(0, 1)``."""
    if o in _TRUTH_VALUED:
        return (0, 1)
    if o == "ite":
        b, c = ivs[1], ivs[2]
        return (min(b[0], c[0]), max(b[1], c[1]))
    if o == "select":
        return (min(x[0] for x in ivs[1:]), max(x[1] for x in ivs[1:]))
    if o == "neg":
        x = ivs[0]
        return (-x[1], -x[0])
    if o == "~":
        x = ivs[0]
        return (-x[1] - 1, -x[0] - 1)
    if o in ("+", "-", "*"):
        x, y = ivs
        if o == "+":
            return (x[0] + y[0], x[1] + y[1])
        if o == "-":
            return (x[0] - y[1], x[1] - y[0])
        return _hull([u * w for u in x for w in y])
    if o in ("/", "%"):
        x, y = ivs
        m = max(abs(x[0]), abs(x[1]))
        if o == "%":
            m = min(m, max(0, max(abs(y[0]), abs(y[1])) - 1))
        neg, pos = (-m if x[0] < 0 else 0), (m if x[1] > 0 else 0)
        if o == "%" or y[0] >= 0:  # the sign of the dividend
            return (neg, pos)
        if y[1] <= 0:  # the opposite sign
            return (-pos, -neg)
        return (-m, m)
    if o in ("&", "|", "^"):
        x, y = ivs
        px, py = _pow2_bound(x), _pow2_bound(y)
        if o == "&" and (x[0] >= 0 or y[0] >= 0):
            return (0, min(z[1] for z in (x, y) if z[0] >= 0))
        return (min(px[0], py[0]), max(px[1], py[1]))
    if o == "<<":
        return _shl_interval(ivs[0], ivs[1])
    if o == ">>":
        return _shr_interval(ivs[0], ivs[1])
    raise ValueError(f"no interval rule for operator {o!r}")
