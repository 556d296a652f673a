"""Values past 128 bits in the generated C (:mod:`absmc.native.cgen`): the C type of a value
(:func:`tier`: ``int64_t``, ``__int128`` or ``big_t``), its size in 64-bit words, the ``big_t``
operations of ``runtime_big.c`` (:func:`big_op`) and the size of ``big_t`` for a model
(:func:`big_words`).

A ``big_t`` is ``BK`` words, two's complement, least significant first; a variable whose values
need k > 2 words takes k ``int64_t`` slots of the unpacked state. The C type of every expression
follows the interval of its values (:func:`absmc.codegen.plan.op_interval`, exact), as for
``int64_t`` and ``__int128``: an operation whose exact result fits ``BK`` words is exact, a wider
one is checked and sets ``ovf`` (the Python back end answers that step). Promela channels of
capacity >= 2 pack all their messages into one variable (SPIN's leader example: 10 two-byte
messages, 160 bits), whose sends and receives are shifts, masks and ors of such values.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from absmc.codegen.plan import FULL64, Interval, op_interval
from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import STATE_PROPERTY_KINDS, Property, System
from absmc.ir.walker import ExprWalker

if TYPE_CHECKING:
    from absmc.native.cgen import CExpr, Layout

__all__ = ["CTYPE", "NOT64", "big_op", "big_words", "full", "runtime_big", "tier", "word_count"]

#: ``big_t`` values are at most this many words when the model's widest value needs more
#: (:func:`big_words`): twice the widest variable's words and one more, at least 4
MIN_BIG_CAP = 4


def word_count(iv: Interval) -> int:
    """The 64-bit words a two's-complement integer needs for every value of ``iv``."""
    bits = max((x if x >= 0 else ~x).bit_length() + 1 for x in iv)
    return -(-bits // 64)


def tier(iv: Interval) -> int:
    """The C type of an expression with values ``iv``: 0 ``int64_t``, 1 ``__int128``, 2
    ``big_t``."""
    return 0 if word_count(iv) == 1 else 1 if word_count(iv) == 2 else 2


def full(k: int) -> Interval:
    """The values of ``k`` words (two's complement)."""
    return (-(1 << (64 * k - 1)), (1 << (64 * k - 1)) - 1)


def big_op(
    tr: CExpr, o: str, s: list[str], ivs: list[Interval], iv: Interval
) -> tuple[str, Interval]:
    """Operator ``o`` of :class:`~absmc.native.cgen.CExpr` ``tr`` on operands with C sources
    ``s`` and values ``ivs`` when an operand or the result (values ``iv``, exact) is past 128
    bits: computed on ``big_t`` (``runtime_big.c``), a result that fits 64 or 128 bits narrowed
    to its type. Returns the C source and the values it has (``iv``, or all of ``BK`` words
    when ``iv`` does not fit them: then the operation is checked)."""
    ts = [tier(x) for x in ivs]

    def up(k: int) -> str:
        return tr.conv(s[k], ts[k], 2)

    def cnt(k: int) -> str:  # a shift count as int64_t
        return s[k] if ts[k] == 0 else f"b_cnt128({s[k]})" if ts[k] == 1 else f"b_cnt({s[k]})"

    bools = [tr.truth(x, y) for x, y in zip(s, ivs, strict=True)]
    if o in ("==", "!=", "<", "<=", ">", ">="):
        return f"(b_cmp({up(0)}, {up(1)}) {o} 0)", iv
    if o in ("&&", "||"):
        return "(" + f" {o} ".join(bools) + ")", iv
    if o == "!":
        return f"(!{bools[0]})", iv
    if o == "=>":
        return f"(!{bools[0]} || {bools[1]})", iv
    rt = tier(iv)
    if o == "ite":
        a, b = tr.conv(s[1], ts[1], rt), tr.conv(s[2], ts[2], rt)
        return f"({bools[0]} ? {a} : {b})", iv
    if o == "select":
        tr.n_select = getattr(tr, "n_select", 0) + 1
        t = f"_si{tr.n_select}"
        elems = [tr.conv(x, y, rt) for x, y in zip(s[1:], ts[1:], strict=True)]
        out = elems[-1]
        for k in range(len(elems) - 2, -1, -1):
            out = f"({t} == {k} ? {elems[k]} : {out})"
        ty = "__int128" if ts[0] == 1 else "int64_t"
        idx = f"b_idx({s[0]})" if ts[0] == 2 else s[0]
        return f"({{ {ty} {t} = {idx}; {out}; }})", iv
    if o in ("&", "|", "^") and rt < 2:
        # the result fits a word (or two): the low words of the operands decide it
        lows = [tr.conv(x, y, rt) if y > rt else x for x, y in zip(s, ts, strict=True)]
        return f"({lows[0]} {o} {lows[1]})", iv
    if o == "~":
        src = f"b_not({up(0)})"
    elif o == "neg":
        src = f"b_neg(C, {up(0)})"
    elif o in ("&", "|", "^"):
        src = f"b_{ {'&': 'and', '|': 'or', '^': 'xor'}[o] }({up(0)}, {up(1)})"
    elif o in ("+", "-", "*", "/", "%"):
        fn = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod"}[o]
        src = f"b_{fn}(C, {up(0)}, {up(1)})"
    elif o == "<<":
        src = f"b_shl(C, {up(0)}, {cnt(1)})"
    elif o == ">>":
        src = f"b_shr({up(0)}, {cnt(1)})"
    else:
        from absmc.native.cgen import Unsupported

        raise Unsupported(f"operator {o}")
    if word_count(iv) > tr.bk:  # checked: ovf when the value leaves bk words
        iv = full(tr.bk)
    return tr.conv(src, 2, tier(iv)), iv


class _Widest(ExprWalker[Interval]):
    """The intervals :class:`CExpr` gives (exact, clamped to 2^16384 in magnitude), walked
    before the translation to size ``big_t``: ``need`` is the most words a value needs,
    ``consts`` the most words a constant needs."""

    def __init__(self, system: System) -> None:
        super().__init__(memoize_across_walks=True)
        self.system = system
        self.need = 1
        self.consts = 1

    def walk_const(self, e: Const) -> Interval:
        k = word_count((e.value, e.value))
        self.need = max(self.need, k)
        self.consts = max(self.consts, k)
        return (e.value, e.value)

    def walk_var(self, e: Var) -> Interval:
        sort = self.system.by_name[e.name].sort
        if isinstance(sort, RangeSort):
            return (sort.lo, sort.hi)
        return (0, 1) if isinstance(sort, BoolSort) else FULL64

    def walk_op(self, e: Op, args: list[Interval]) -> Interval:
        lo, hi = op_interval(str(e.op), args)
        m = 1 << 16384
        iv = (max(lo, -m), min(hi, m))
        self.need = max(self.need, word_count(iv))
        return iv


def big_words(system: System, lay: Layout, props: Sequence[Property], at_least: int = 0) -> int:
    """How many 64-bit words a ``big_t`` of the generated code has (0: every value fits 128
    bits, no ``big_t``): the most any variable, constant or (sub)expression of the commands,
    properties and end-state condition needs, but at most twice the widest variable's words
    and one more (:data:`MIN_BIG_CAP` at least): a wider intermediate value is computed with
    overflow checks (``ovf``: the Python back end answers that step). ``at_least``: a lower
    bound."""
    w = _Widest(system)
    vmax = max([f.words for f in lay.fields] + [1])
    for v in system.variables:
        if isinstance(v.sort, RangeSort) and v.sort.overflow == "wrap":
            vmax = max(vmax, word_count((v.sort.lo, v.sort.size)))
    exprs: list[Expr] = []
    for c in system.commands:
        exprs += [c.guard, *(x for x, _ in c.errors), *(x for _, x in c.updates)]
        exprs += [x for _, x in c.asserts]
    exprs += [p.expr for p in props if p.kind in STATE_PROPERTY_KINDS]
    if system.valid_end is not None:
        exprs.append(system.valid_end)
    for x in exprs:
        w.walk(x)
    need = max(w.need, vmax, at_least)
    if need <= 2:
        return 0
    return min(need, max(2 * vmax + 1, w.consts, MIN_BIG_CAP))


@cache
def runtime_big() -> str:
    """``runtime_big.c``: ``big_t`` and its operations."""
    return resources.files("absmc.native").joinpath("runtime_big.c").read_text(encoding="utf-8")


#: the C type of each :func:`tier`, and a test that a value of it leaves 64 bits
CTYPE = ("int64_t", "__int128", "big_t")
NOT64 = ("0", "{0} < INT64_MIN || {0} > INT64_MAX", "!b_fits({0}, 1)")
