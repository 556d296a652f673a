"""C source for a System: the model-specific part of the native back end.

The generated code has the same semantics as :mod:`absmc.codegen.python` (the generated-Python back
end): commands in order, dispatched on program counters, timeout commands only when nothing else
is enabled, exclusive chains followed depth-first and cut at a repeated (state, process) pair,
model errors and failed assertions as failures (kinds below), C division and remainder,
wrap-around ranges. Values are ``int64_t``, ``__int128`` where an expression's values leave 64 bits
and ``big_t`` (:data:`BK` 64-bit words, ``runtime_big.c``) where they leave 128: the type follows
each expression's interval of values (:func:`tier`), so a value of any width is exact in C. An
operation whose exact result may leave the type it is computed in (unbounded ``INT`` data, wide
products) is checked and sets the context's ``ovf`` flag, which makes the caller fall back to the
Python back end — never a silently wrong value.

Failure kinds (``add_fail(C, ci, kind, a, b)``): 1 — error condition ``a`` of the command
(``Command.errors[a]``); 2 — division by zero; 3 — failed assertion of property ``a`` (an index
into the selected properties); 4 — value ``b`` assigned to variable ``a`` outside its range.

State packing (:class:`Layout`): each variable gets a bit field of a 64-bit word — a range
``lo..hi`` stores ``value - lo`` in ``bit_length(hi - lo)`` bits, a bool one bit, an unbounded
``INT`` a whole word — placed first-fit by decreasing width, so a packed state is ``NW`` words;
a field over 64 bits takes whole words and the first bits of one more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from absmc.codegen.plan import (
    FULL64,
    Interval,
    choose_dispatch_var,
    dispatch_value,
    may_raise,
    op_interval,
    runs,
    split_timeout,
    storable_stacks,
    strip_dispatch,
)
from absmc.ir.arrays import ArrayWrite, strided_slots
from absmc.ir.dependency import forward_commands, safe_conditions, visible_variables
from absmc.ir.depth import system_depth
from absmc.ir.expr import TRUE, Const, Expr, Op, Var, conj, conjuncts
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import STATE_PROPERTY_KINDS, Command, Property, System
from absmc.ir.walker import ExprWalker
from absmc.native.fairpor import SafeConditions, fair_safe_conditions
from absmc.native.parts import MODEL_MARK
from absmc.native.shapes import (
    SHARE_MIN_CHARS,
    SHARE_MIN_COMMANDS,
    Shapes,
    cond_switch,
    factored,
    render,
    shape_functions,
    share,
    share_processes,
    tabulate,
    weaken,
)
from absmc.native.wide import CTYPE, NOT64, big_op, big_words, runtime_big, tier, word_count

if TYPE_CHECKING:
    from absmc.native.background import ForkedValue

#: a System of at least this many commands has the safety search's partial-order analysis
#: (:func:`~absmc.ir.dependency.safe_conditions`) run in a forked child while its C is generated
#: (:meth:`CGen.source`); below, the fork would cost about what it saves
FORK_ANALYSIS_MIN_COMMANDS = 200

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
INT128_MIN = -(1 << 127)
INT128_MAX = (1 << 127) - 1
_M64 = (1 << 64) - 1

#: expressions deeper than this are left to the Python back end (C compilers recurse on them)
MAX_C_DEPTH = 2000


class Unsupported(Exception):
    """The System uses something the native back end does not translate (the caller uses the
    Python back end): very deep expressions."""


#: the values of an ``__int128`` expression (:data:`absmc.codegen.plan.FULL64`: ``int64_t``)
FULL128: Interval = (INT128_MIN, INT128_MAX)


def c_const(v: int) -> str:
    """A C literal for the integer ``v``: ``int64_t`` when it fits 64 bits, else an
    ``__int128`` built from its two halves (``W128(hi, lo)``). Raises :class:`Unsupported`
    outside 128 bits (:meth:`CExpr.lit` writes those as ``big_t``)."""
    if INT64_MIN <= v <= INT64_MAX:
        if v == INT64_MIN:
            return "(-INT64_C(9223372036854775807) - 1)"
        return f"INT64_C({v})" if not -(1 << 31) <= v < (1 << 31) else str(v)
    if not INT128_MIN <= v <= INT128_MAX:
        raise Unsupported(f"constant {v} does not fit in 128 bits")
    return f"W128({c_const(v >> 64)}, UINT64_C({v & _M64}))"


def _fits64(iv: Interval) -> bool:
    return iv[0] >= INT64_MIN and iv[1] <= INT64_MAX


def _fits128(iv: Interval) -> bool:
    return iv[0] >= INT128_MIN and iv[1] <= INT128_MAX


def is_wide(iv: Interval) -> bool:
    """Whether an expression with values ``iv`` is computed wider than ``int64_t`` (its
    values leave 64 bits)."""
    return not _fits64(iv)


class CExpr(ExprWalker[tuple[str, Interval]]):
    """IR expression -> (C source over the unpacked state ``v`` and the context ``C``, interval
    of its values). The C type follows the interval (:func:`tier`): ``int64_t`` when it fits 64
    bits, ``__int128`` when it fits 128, else ``big_t`` of ``bk`` words (``runtime_big.c``;
    ``bk`` = 0: the model has no such value); an operation whose exact result may leave the
    type it is computed in is checked (``ck_add``, ``ck_add128``, ``b_add`` ...) and sets
    ``C->ovf``. A variable with values beyond 64 bits occupies ``words`` ``int64_t`` slots of
    ``v``, low word first (:class:`Layout`)."""

    def __init__(self, system: System, lay: Layout, var: str = "v", bk: int = 0) -> None:
        super().__init__(memoize_across_walks=True)
        self.system = system
        self.layout = lay
        self.var = var
        self.bk = bk
        #: an operation's exact values left 128 bits while ``bk`` is 0 (computed checked)
        self.past128 = False

    def c(self, e: Expr) -> str:
        """The C source of ``e``."""
        return self.walk(e)[0]

    def cb(self, e: Expr) -> str:
        """The C source of ``e`` as an ``int`` truth value (a wide value compared with 0)."""
        src, iv = self.walk(e)
        return self.truth(src, iv)

    @staticmethod
    def truth(src: str, iv: Interval) -> str:
        """``src`` (values ``iv``) as an ``int`` truth value."""
        t = tier(iv)
        return src if t == 0 else f"({src} != 0)" if t == 1 else f"(!b_is0({src}))"

    def lit(self, v: int, t: int) -> str:
        """A literal for ``v`` of C type ``t`` (:func:`tier`; ``t`` >= the tier of ``v``)."""
        if t < 2:
            return c_const(v)
        if word_count((v, v)) > self.bk:
            raise Unsupported(f"constant {v} does not fit in {64 * self.bk} bits")
        ws = ", ".join(f"UINT64_C({(v >> (64 * i)) & _M64})" for i in range(self.bk))
        return f"((big_t){{{{{ws}}}}})"

    @staticmethod
    def conv(src: str, t_from: int, t_to: int) -> str:
        """``src`` of C type ``t_from`` as type ``t_to`` (narrowing: the value fits)."""
        if t_from == t_to:
            return src
        if t_to == 2:
            return f"b_of64({src})" if t_from == 0 else f"b_of128({src})"
        if t_from == 2:
            return f"b_lo64({src})" if t_to == 0 else f"b_lo128({src})"
        return f"((int64_t){src})" if t_to == 0 else src

    def strided(self, elems: Sequence[Expr]) -> tuple[int, int] | None:
        """``(slot, stride)`` when every element is a variable of at most 64 bits and element
        ``k`` is at slot ``slot + stride * k`` of ``v`` (``stride >= 1``); else ``None``
        (:func:`absmc.ir.arrays.strided_slots`, in slots rather than variable positions)."""
        if strided_slots(elems, self.system.index_of) is None:
            return None
        names = [x.name for x in elems if isinstance(x, Var)]
        fields = [self.layout.fields[self.system.index_of[n]] for n in names]
        if any(f.wide for f in fields):
            return None
        slots = [f.slot for f in fields]
        stride = slots[1] - slots[0] if len(slots) > 1 else 1
        if stride < 1 or any(slots[k] != slots[0] + stride * k for k in range(len(slots))):
            return None
        return (slots[0], stride)

    def equality_span(self, e: Op) -> tuple[str, int, int] | None:
        """For a disjunction of three or more ``x == k`` (a variable of at most 64 bits) whose
        constants ``k`` are the consecutive integers ``lo..hi``: (C source of ``x``, ``lo``,
        ``hi``), else ``None``. (Channel variables that may denote any of several channels give
        long such disjunctions.)"""
        if len(e.args) < 3:
            return None
        name: str | None = None
        ks: set[int] = set()
        for a in e.args:
            if not (isinstance(a, Op) and a.op == "==" and len(a.args) == 2):
                return None
            x, k = a.args
            if isinstance(x, Const):
                x, k = k, x
            if not (isinstance(x, Var) and isinstance(k, Const)) or name not in (None, x.name):
                return None
            name = x.name
            ks.add(int(k.value))
        assert name is not None
        lo, hi = min(ks), max(ks)
        src, iv = self.walk_var(Var(name, self.system.by_name[name].sort))
        if hi - lo + 1 != len(ks) or is_wide(iv) or not (_fits64((lo, hi))):
            return None
        return src, lo, hi

    def walk_const(self, e: Const) -> tuple[str, Interval]:
        iv = (e.value, e.value)
        return self.lit(e.value, tier(iv)), iv

    def walk_var(self, e: Var) -> tuple[str, Interval]:
        i = self.system.index_of[e.name]
        f = self.layout.fields[i]
        sort = self.system.by_name[e.name].sort
        if isinstance(sort, RangeSort):
            iv: Interval = (sort.lo, sort.hi)
        elif isinstance(sort, BoolSort):
            iv = (0, 1)
        else:
            iv = FULL64
        if f.words > 2:
            return self.conv(f"b_load({self.var} + {f.slot}, {f.words})", 2, tier(iv)), iv
        if f.wide:
            return f"W128({self.var}[{f.slot + 1}], {self.var}[{f.slot}])", iv
        return f"{self.var}[{f.slot}]", iv

    def _typed(
        self, iv: Interval, any_wide: bool, narrow: str, wide: str, checked: str
    ) -> tuple[str, Interval]:
        """The source for an operation with result values ``iv``: ``narrow`` (all in 64 bits),
        ``wide`` (exact in 128 bits), ``checked`` (a 128-bit function that sets ``ovf``)."""
        if _fits64(iv):
            return (f"((int64_t){wide})", iv) if any_wide else (narrow, iv)
        if _fits128(iv):
            return wide, iv
        self.past128 = True
        return checked, FULL128

    def walk_op(self, e: Op, a: list[tuple[str, Interval]]) -> tuple[str, Interval]:
        o = str(e.op)
        s = [x[0] for x in a]
        ivs = [x[1] for x in a]
        iv = op_interval(o, ivs)  # exact; _typed narrows it to what the C type holds
        if self.bk and (tier(iv) == 2 or any(tier(x) == 2 for x in ivs)):
            return big_op(self, o, s, ivs, iv)
        any_wide = any(is_wide(x) for x in ivs)
        if o in ("==", "!=", "<", "<=", ">", ">="):
            return f"({s[0]} {o} {s[1]})", iv
        if o == "&&":
            return "(" + " && ".join(s) + ")", iv
        if o == "||":
            span = self.equality_span(e)
            if span is not None:  # x == lo || ... || x == hi: one range test
                x, lo, hi = span
                return f"({c_const(lo)} <= {x} && {x} <= {c_const(hi)})", iv
            return "(" + " || ".join(s) + ")", iv
        if o == "!":
            return f"(!{s[0]})", iv
        if o == "=>":
            return f"(!{s[0]} || {s[1]})", iv
        if o == "ite":
            return f"({s[0]} ? {s[1]} : {s[2]})", iv
        if o == "neg":
            return self._typed(
                iv, any_wide, f"(-{s[0]})", f"(-(__int128){s[0]})", f"ck_neg128(C, {s[0]})"
            )
        if o == "~":
            return f"(~{s[0]})", iv
        if o in ("+", "-", "*"):
            fn = {"+": "ck_add", "-": "ck_sub", "*": "ck_mul"}[o]
            return self._typed(
                iv,
                any_wide,
                f"({s[0]} {o} {s[1]})",
                f"((__int128){s[0]} {o} {s[1]})",
                f"{fn}128(C, {s[0]}, {s[1]})",
            )
        if o in ("/", "%"):
            fn = "i_div" if o == "/" else "i_mod"
            call = f"{fn}128(C, {s[0]}, {s[1]})"
            return self._typed(iv, any_wide, f"{fn}(C, {s[0]}, {s[1]})", call, call)
        if o in ("&", "|", "^"):
            src = f"({s[0]} {o} {s[1]})"
            return self._typed(iv, any_wide, src, src, src)
        if o == "<<":
            call = f"i_shl128(C, {s[0]}, {s[1]})"
            return self._typed(iv, any_wide, f"i_shl(C, {s[0]}, {s[1]})", call, call)
        if o == ">>":
            call = f"i_shr128({s[0]}, {s[1]})"
            return self._typed(iv, any_wide, f"i_shr({s[0]}, {s[1]})", call, call)
        if o == "select":
            # element i, the last one when i is out of range (ir.arrays; the reference
            # evaluator's meaning): only the chosen element is evaluated
            elems = s[1:]
            self.n_select = getattr(self, "n_select", 0) + 1
            t = f"_si{self.n_select}"  # a fresh name: selects may nest
            slots = self.strided(e.args[1:])
            if slots is not None and not is_wide(ivs[0]):
                # state variables at evenly spaced slots: one indexed load with a bounds test
                at = t if slots[1] == 1 else f"{slots[1]} * {t}"
                at = at if slots[0] == 0 else f"{slots[0]} + {at}"
                n = len(elems)
                load = f"((uint64_t){t} < {n}u ? {self.var}[{at}] : {elems[-1]})"
                return f"({{ int64_t {t} = {s[0]}; {load}; }})", iv
            out = elems[-1]
            for k in range(len(elems) - 2, -1, -1):
                out = f"({t} == {k} ? {elems[k]} : {out})"
            ty = "__int128" if is_wide(ivs[0]) else "int64_t"
            return f"({{ {ty} {t} = {s[0]}; {out}; }})", iv
        raise Unsupported(f"operator {o}")


@dataclass(frozen=True)
class Field:
    """Where a variable lives in a packed state: word, bit offset, width (bits), lowest value
    (``value - lo`` is stored), whether it is a whole signed word (unbounded ``INT``), its
    first slot in the unpacked state and how many ``int64_t`` slots its values take
    (``words``: 1, 2 for an ``__int128`` value, more for a ``big_t`` one; low word first). A
    field wider than 64 bits starts at bit 0 of ``word`` and goes on in the following words
    (the last one's low ``width % 64`` bits)."""

    word: int
    shift: int
    width: int
    lo: int
    signed: bool
    slot: int = 0
    words: int = 1

    @property
    def wide(self) -> bool:
        """Whether the value takes more than one slot."""
        return self.words > 1


@dataclass(frozen=True)
class Layout:
    """The packed state vector: one :class:`Field` per variable (declaration order) in ``words``
    64-bit words; the unpacked state is ``slots`` ``int64_t`` values (one per variable, several
    for a wide one)."""

    fields: tuple[Field, ...]
    words: int
    slots: int = 0

    @property
    def bits(self) -> int:
        """Bits actually used by the fields."""
        return sum(f.width for f in self.fields)

    @property
    def has_wide(self) -> bool:
        """Whether some variable takes several slots."""
        return self.slots != len(self.fields)

    def to_slots(self, state: Sequence[int]) -> list[int] | None:
        """The unpacked C state (``slots`` signed 64-bit values) of a state (one integer per
        variable); ``None`` when a value does not fit its slots."""
        if not self.has_wide:
            return list(state)
        out: list[int] = []
        for f, x in zip(self.fields, state, strict=True):
            if f.wide:
                if word_count((x, x)) > f.words:
                    return None
                for k in range(f.words):
                    w = (x >> (64 * k)) & _M64
                    out.append(w - (1 << 64) if w > INT64_MAX else w)
            else:
                out.append(x)
        return out

    def from_slots(self, vals: Sequence[int]) -> tuple[int, ...]:
        """The state (one integer per variable) of ``slots`` unpacked C values."""
        if not self.has_wide:
            return tuple(vals)
        out: list[int] = []
        for f in self.fields:
            x = vals[f.slot + f.words - 1]
            for k in range(f.words - 2, -1, -1):
                x = (x << 64) | (vals[f.slot + k] & _M64)
            out.append(x)
        return tuple(out)


def layout(system: System) -> Layout:
    """Bit fields for the variables of ``system``: fields over 64 bits first (each starting a
    word, the rest of its last word free), then first fit by decreasing width."""
    widths: list[tuple[int, int, bool, int]] = []  # width, lo, signed, slots
    for v in system.variables:
        if isinstance(v.sort, RangeSort):
            span = v.sort.hi - v.sort.lo
            w = max(1, span.bit_length())
            k = max(
                word_count((v.sort.lo, v.sort.hi)), word_count((0, (1 << w) - 1)) if w > 64 else 1
            )
            widths.append((w, v.sort.lo, False, k))
        elif isinstance(v.sort, BoolSort):
            widths.append((1, 0, False, 1))
        else:
            widths.append((64, 0, True, 1))
    order = sorted(range(len(widths)), key=lambda i: -widths[i][0])
    free: list[int] = []  # bits used per word
    placed: dict[int, tuple[int, int]] = {}
    for i in order:
        w = widths[i][0]
        if w > 64:
            placed[i] = (len(free), 0)
            free += [64] * ((w - 1) // 64) + [w - 64 * ((w - 1) // 64)]
            continue
        for k, used in enumerate(free):
            if used + w <= 64:
                placed[i] = (k, used)
                free[k] = used + w
                break
        else:
            placed[i] = (len(free), 0)
            free.append(w)
    fields: list[Field] = []
    slot = 0
    for i, (w, lo, signed, k) in enumerate(widths):
        word, shift = placed[i]
        fields.append(Field(word, shift, w, lo, signed, slot, k))
        slot += k
    return Layout(tuple(fields), max(1, len(free)), slot)


def _mask(width: int) -> str:
    return "UINT64_C(0xffffffffffffffff)" if width == 64 else f"UINT64_C({(1 << width) - 1})"


def ltl_conditions(
    system: System, visible: frozenset[str], fair: bool
) -> tuple[SafeConditions, SafeConditions]:
    """The analyses behind :meth:`CGen.ltl_ample_source`: the product search's safe locations
    (:func:`~absmc.ir.dependency.safe_conditions` with ``visible``) and, with ``fair``, those
    of its search under weak fairness (:func:`~absmc.native.fairpor.fair_safe_conditions`;
    else none)."""
    safe = safe_conditions(system, visible)
    return safe, fair_safe_conditions(system, safe) if fair else {}


class CGen:
    """Generates the model part of the C source (see the module docstring)."""

    def __init__(self, system: System, props: Sequence[Property], por: bool = True) -> None:
        if system_depth(system) > MAX_C_DEPTH:
            raise Unsupported(f"expressions nested deeper than {MAX_C_DEPTH} levels")
        self.system = system
        self.props = tuple(props)
        #: with ``False`` the partial-order tables are empty (:meth:`ample_tables`)
        self.por = por
        self.layout = layout(system)
        #: words of a ``big_t`` (0: none; :func:`big_words`, sized in :meth:`source` when only
        #: an expression's values leave 128 bits)
        wide = any(f.words > 2 for f in self.layout.fields)
        self.bk = big_words(system, self.layout, self.props) if wide else 0
        self.tr = CExpr(system, self.layout, bk=self.bk)
        self.n = self.layout.slots
        self.lines: list[str] = []
        self.proc_ids = {p.name: k for k, p in enumerate(system.processes)}
        self.assert_index = {p.name: k for k, p in enumerate(self.props) if p.kind == "assert"}
        self.uid = 0
        #: commands share shape functions (:func:`~absmc.native.shapes.share`) from
        #: :data:`SHARE_MIN_COMMANDS` commands on, or when the process functions' code would
        #: exceed :data:`SHARE_MIN_CHARS` characters without (:meth:`source`)
        self.share = len(system.commands) >= SHARE_MIN_COMMANDS
        #: shape (C with ``q[j]`` for its literals) -> (number, rows of literals)
        self.shapes: Shapes = {}
        self._raises: dict[Expr, bool] = {}
        #: the safety search's safe locations (:meth:`ample_tables`), once computed, and the
        #: forked child computing them while :meth:`source` generates the rest
        self._safe: SafeConditions | None = None
        self._analysis: ForkedValue[SafeConditions] | None = None
        for v in system.variables:
            k = self.layout.fields[system.index_of[v.name]].words
            if word_count((v.init, v.init)) > k:
                raise Unsupported(f"initial value of {v.name} does not fit in {64 * k} bits")
            if isinstance(v.sort, RangeSort) and not v.sort.lo <= v.init <= v.sort.hi:
                raise Unsupported(f"initial value of {v.name} outside its range")

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def _outside(self, x: str, ty: int, sort: RangeSort) -> str:
        """C: value ``x`` of C type ``ty`` (:func:`tier`) lies outside ``sort``'s range."""
        lo, hi = self.tr.lit(sort.lo, ty), self.tr.lit(sort.hi, ty)
        if ty == 2:
            return f"b_cmp({x}, {lo}) < 0 || b_cmp({x}, {hi}) > 0"
        return f"{x} < {lo} || {x} > {hi}"

    def raises(self, e: Expr) -> bool:
        """:func:`~absmc.codegen.plan.may_raise`, once per distinct expression (the joint
        commands of a rendezvous repeat their parts' conditions)."""
        got = self._raises.get(e)
        if got is None:
            got = self._raises[e] = may_raise(e)
        return got

    # -- commands ------------------------------------------------------------------------
    def command(
        self, ind: int, c: Command, guard: Expr, var: str | None, value: int, mode: str
    ) -> None:
        """One command: errors, guard, updates, asserts, range checks, then the sink
        (``main``: a step or an exclusive chain; ``fn``: the process function's output)."""
        sys = self.system
        tr = self.tr
        self.uid += 1
        done = f"d{self.uid}"
        note = f"{c.process}: {c.source_text or c.text()}".replace("\n", " ").replace("*/", "* /")
        self.emit(ind, f"/* {note[:100]} */")
        start = len(self.lines)
        self.emit(ind, "{")
        i = ind + 1
        # only / and % set C->err: a command that cannot divide by zero neither resets nor
        # reads it (less C: the compiler's time dominates on models of many commands)
        zero = f"if (C->err) {{ add_fail(C, {c.index}, 2, 0, 0); goto {done}; }}"
        # ``x`` and ``t`` are the enclosing function's (:meth:`locals`); a condition that
        # cannot divide by zero is tested in place (less C: on models of thousands of
        # commands the compiler's time is most of the model-to-verdict time)
        exprs = [e for e, _ in c.errors] + [guard] + [e for _, e in (*c.updates, *c.asserts)]
        if any(self.raises(e) for e in exprs):
            self.emit(i, "C->err = 0;")
        # shared code is called only where the guard or an error condition holds (tested in
        # place; none of them may divide by zero: no side effect)
        tests: list[Expr] | None = []
        for k, (cond, _msg) in enumerate(c.errors):
            cnd = cond if var is None else strip_dispatch(cond, var, value)
            if tests is not None:
                tests = None if self.raises(cnd) else [*tests, weaken(cnd)]
            fail = f"{{ add_fail(C, {c.index}, 1, {k}, 0); goto {done}; }}"
            if self.raises(cnd):
                self.emit(i, f"x = {tr.cb(cnd)};")
                self.emit(i, zero)
                self.emit(i, f"if (x) {fail}")
            else:
                self.emit(i, f"if ({tr.cb(cnd)}) {fail}")
        g = tr.cb(guard)
        if tests is not None:
            tests = None if g == "1" or self.raises(guard) else [*tests, guard]
        if g != "1":
            if self.raises(guard):
                self.emit(i, f"x = {g};")
                self.emit(i, zero)
                self.emit(i, f"if (!x) goto {done};")
            else:
                self.emit(i, f"if (!{g}) goto {done};")
        if self.n:
            self.emit(i, "memcpy(t, v, sizeof t);")
        checks: list[tuple[str, int, RangeSort, int]] = []
        temps: list[tuple[str, Field, int]] = []
        updates, stores = self.split_writes(c)
        for k, (name, rhs) in enumerate(updates):
            idx = sys.index_of[name]
            fld = self.layout.fields[idx]
            sort = sys.by_name[name].sort
            src, iv = tr.walk(rhs)
            if isinstance(sort, BoolSort):
                src, iv = f"({tr.truth(src, iv)} ? 1 : 0)", (0, 1)
            in_range = isinstance(sort, RangeSort) and sort.lo <= iv[0] and iv[1] <= sort.hi
            wraps = isinstance(sort, RangeSort) and sort.overflow == "wrap" and not in_range
            # the temporary's C type: the value's, the variable's, the wrap-around's
            ty = max(tier(iv), min(fld.words - 1, 2))
            if wraps:
                assert isinstance(sort, RangeSort)
                ty = max(ty, tier((sort.lo, sort.size)))
            if ty == 0 and not fld.wide and isinstance(sort, (BoolSort, RangeSort)):
                # a value of 64 bits that needs no range check: written in place (the
                # right-hand sides read ``v``, so the order of the writes does not matter)
                if in_range or isinstance(sort, BoolSort):
                    self.emit(i, f"t[{fld.slot}] = {src};")
                    continue
                if wraps:
                    lo, hi, size = (c_const(x) for x in (sort.lo, sort.hi, sort.size))
                    self.emit(i, f"t[{fld.slot}] = i_fit({src}, {lo}, {hi}, {size});")
                    continue
            tmp = f"u{k}"
            self.emit(i, f"{CTYPE[ty]} {tmp} = {tr.conv(src, tier(iv), ty)};")
            if in_range:
                pass  # in range by the value's interval: nothing to wrap or report
            elif isinstance(sort, RangeSort):
                out = self._outside(tmp, ty, sort)
                if wraps:
                    lo, size = tr.lit(sort.lo, ty), tr.lit(sort.size, ty)
                    fn = ("i_wrap(", "i_wrap128(C, ", "b_wrap(C, ")[ty]
                    self.emit(i, f"if ({out}) {tmp} = {fn}{tmp}, {lo}, {size});")
                else:
                    checks.append((tmp, idx, sort, ty))
            elif ty:  # an unbounded INT holds 64 bits: past them, the Python back end
                self.emit(i, f"if ({NOT64[ty].format(tmp)}) C->ovf = 1;")
            temps.append((tmp, fld, ty))
        if any(self.raises(e) for _, e in c.updates):  # only / and % set C->err
            self.emit(i, zero)
        for name, cond in c.asserts:
            if name not in self.assert_index:
                continue
            self.emit(i, f"x = {tr.cb(cond)};")
            if self.raises(cond):
                self.emit(i, zero)
            self.emit(i, f"if (!x) add_fail(C, {c.index}, 3, {self.assert_index[name]}, 0);")
        for tmp, idx, sort, ty in checks:
            fail = f"add_fail(C, {c.index}, 4, {idx}, {tmp});"
            if ty:  # the message needs the value: one past 64 bits is worded by Python
                fail = (
                    f"if ({NOT64[ty].format(tmp)}) C->ovf = 1; "
                    f"else add_fail(C, {c.index}, 4, {idx}, {tr.conv(tmp, ty, 0)});"
                )
            self.emit(i, f"if ({self._outside(tmp, ty, sort)}) {{ {fail} goto {done}; }}")
        for tmp, fld, ty in temps:
            at = f"t[{fld.slot}]"
            if fld.words > 2:
                self.emit(i, f"b_store(t + {fld.slot}, {tmp}, {fld.words});")
            elif fld.wide and ty == 2:
                self.emit(
                    i, f"{at} = (int64_t){tmp}.w[0]; t[{fld.slot + 1}] = (int64_t){tmp}.w[1];"
                )
            elif fld.wide:
                self.emit(
                    i,
                    f"{at} = (int64_t)(uint64_t){tmp}; t[{fld.slot + 1}] = (int64_t)({tmp} >> 64);",
                )
            else:
                self.emit(i, f"{at} = {tr.conv(tmp, ty, 0) if ty == 2 else f'(int64_t){tmp}'};")
        self.stores(i, stores)
        f = self.proc_ids[c.exclusive] if c.exclusive is not None else -1
        main = (
            f"close_chain(C, {c.index}, t, {f}); C->ex = 1;"
            if c.exclusive is not None
            else f"add_step1(C, {c.index}, t);"
        )
        if mode == "fn":
            self.emit(i, f"fn_push(C, {c.index}, t, {f});")
        elif mode == "main":
            self.emit(i, main)
        elif c.exclusive is None:  # both: the sink chosen by the caller's flags (m_sink)
            self.emit(i, f"m_sink(C, flags, {c.index}, t);")
        else:
            self.emit(i, f"if (flags & FN_MAIN) {{ {main} }} else fn_push(C, {c.index}, t, {f});")
        self.emit(ind, "}")
        self.emit(ind, f"{done}:;")
        if self.share:
            enabled = None if tests is None else render(factored(tests), tr.cb)
            share(self.lines, start, ind, done, mode, self.shapes, enabled)

    def split_writes(
        self, c: Command
    ) -> tuple[list[tuple[str, Expr]], list[tuple[ArrayWrite, int, int, RangeSort]]]:
        """The command's updates without the array writes that become indexed stores, and
        those stores ``(write, slot, stride, sort)`` in execution order (the plan's
        :func:`absmc.codegen.plan.storable_stacks`, as in the Python back end; the stored
        variables keep their innermost ``rest``, dropped when it is the variable itself, since
        ``t`` starts as a copy of ``v``). A write stack is stored so only when nothing in it
        can divide by zero, its variables share one range sort of at most 64 bits at evenly
        spaced slots, and each value fits that range or wraps into it: then
        the stores have the per-element updates' exact semantics."""
        sys = self.system
        where: dict[str, tuple[int, int]] = {}

        def write_ok(stack: list[ArrayWrite], sort: RangeSort) -> bool:
            pos = self.tr.strided([Var(n) for n in stack[0].names])
            if pos is None:
                return False
            wraps = sort.overflow == "wrap" and _fits64((sort.lo, sort.size))
            for w in stack:
                ix, vx = self.tr.walk(w.index)[1], self.tr.walk(w.value)[1]
                fits = sort.lo <= vx[0] and vx[1] <= sort.hi
                if is_wide(ix) or is_wide(vx) or not (fits or wraps):
                    return False
            where[stack[0].names[0]] = pos
            return True

        updates, stacks = storable_stacks(sys, c, write_ok)
        stores: list[tuple[ArrayWrite, int, int, RangeSort]] = []
        for stack in stacks:
            sort = sys.by_name[stack[0].names[0]].sort
            assert isinstance(sort, RangeSort)
            slot, stride = where[stack[0].names[0]]
            stores += [(w, slot, stride, sort) for w in stack]
        # ``t`` starts as a copy of ``v``: a stored variable whose rest is itself needs no update
        stored = {n for stack in stacks for n in stack[0].names}
        out = [
            (n, r) for n, r in updates if not (n in stored and isinstance(r, Var) and r.name == n)
        ]
        return out, stores

    def stores(self, ind: int, stores: list[tuple[ArrayWrite, int, int, RangeSort]]) -> None:
        """``t[slot] = value`` for each indexed store whose index is in range, in order (a
        later write to the same element wins), the value wrapped into the variables' range;
        the expressions read the state before the step, ``v``."""
        for w, slot, stride, sort in stores:
            self.uid += 1
            k, x = f"_w{self.uid}", f"_x{self.uid}"
            last = w.first + w.length - 1
            self.emit(ind, f"{{ int64_t {k} = {self.tr.c(w.index)};")
            self.emit(ind + 1, f"if ({k} >= {c_const(w.first)} && {k} <= {c_const(last)}) {{")
            src, iv = self.tr.walk(w.value)
            self.emit(ind + 2, f"int64_t {x} = {src};")
            if not (sort.lo <= iv[0] and iv[1] <= sort.hi):
                lo, hi = c_const(sort.lo), c_const(sort.hi)
                self.emit(
                    ind + 2,
                    f"if ({x} < {lo} || {x} > {hi}) {x} = i_wrap({x}, {lo}, {c_const(sort.size)});",
                )
            off = f"{k} - {c_const(w.first)}" if w.first else k
            at = off if stride == 1 else f"{stride} * ({off})"
            self.emit(ind + 2, f"t[{slot} + {at}] = {x};" if slot else f"t[{at}] = {x};")
            self.emit(ind + 1, "}")
            self.emit(ind, "}")

    def block(self, ind: int, cmds: Sequence[Command], mode: str) -> None:
        """``cmds`` in order, dispatched on program counters where possible (as in
        :mod:`absmc.codegen.python`)."""
        sys = self.system
        for run in runs(cmds):
            var = choose_dispatch_var(sys, run)
            if var is not None and self.layout.fields[sys.index_of[var]].wide:
                var = None  # C switches on 64-bit values only
            if var is None:
                for c in run:
                    self.command(ind, c, c.guard, None, 0, mode)
                continue
            groups: dict[int, list[Command]] = {}
            for c in run:
                value = dispatch_value(c, var)
                assert value is not None
                groups.setdefault(value, []).append(c)
            self.emit(ind, f"switch (v[{self.layout.fields[sys.index_of[var]].slot}]) {{")
            for value, grp in groups.items():
                self.emit(ind, f"case {c_const(value)}: {{")
                for c in grp:
                    guard = conj(list(conjuncts(strip_dispatch(c.guard, var, value))))
                    self.command(ind + 1, c, guard, var, value, mode)
                self.emit(ind + 1, "break;")
                self.emit(ind, "}")
            self.emit(ind, "default: break;")
            self.emit(ind, "}")

    def locals(self) -> None:
        """The variables every command of a function uses (:meth:`command`): the target
        state ``t`` and the condition value ``x``."""
        self.emit(1, f"int64_t t[{max(self.n, 1)}]; int64_t x; (void)t; (void)x;")

    def functions(self) -> None:
        """One step function per process, the dispatch tables and the successor function. When
        each process's commands are one run in command order (always in Promela), the successor
        function calls the process functions (each command's code exists once); otherwise it
        has its own copy of the commands."""
        sys = self.system
        normal, timeout = split_timeout(sys.commands)
        runs_n, runs_t = runs(normal), runs(timeout)
        compact = all(len({r[0].process for r in runs}) == len(runs) for runs in (runs_n, runs_t))
        mode = "both" if compact else "fn"
        if compact:
            self.emit(0, "static void m_sink(ctx_t *C, int flags, int ci, const int64_t *t) {")
            self.emit(1, "if (flags & FN_MAIN) add_step1(C, ci, t); else fn_push(C, ci, t, -1);")
            self.emit(0, "}")
        for p in sys.processes:
            k = self.proc_ids[p.name]
            mine = [c for c in sys.commands if c.process == p.name]
            self.emit(0, f"static void fn{k}(ctx_t *C, const int64_t *v, int flags) {{")
            self.locals()
            self.emit(1, "if (flags & FN_NORMAL) {")
            nmine, tmine = split_timeout(mine)
            self.block(2, nmine, mode)
            self.emit(1, "}")
            if tmine:
                self.emit(1, "if (flags & FN_TIMEOUT) {")
                self.block(2, tmine, mode)
                self.emit(1, "}")
            self.emit(1, "(void)C; (void)v; (void)flags;")
            self.emit(0, "}")
        fns = ", ".join(f"fn{k}" for k in range(len(sys.processes))) or "0"
        self.emit(0, f"static const fn_t m_fns[NFN > 0 ? NFN : 1] = {{{fns}}};")
        fn_of = ", ".join(str(self.proc_ids[c.process]) for c in sys.commands) or "0"
        self.emit(0, f"static const int32_t m_fn_of[NCMD > 0 ? NCMD : 1] = {{{fn_of}}};")
        # per process the unpacked slot of its program counter (-1: none), for weak fairness
        pc_slot = [
            str(self.layout.fields[sys.index_of[p.pc]].slot) if p.pc is not None else "-1"
            for p in sys.processes
        ]
        pcs = ", ".join(pc_slot) or "-1"
        self.emit(0, f"static const int32_t m_pc_slot[NFN > 0 ? NFN : 1] = {{{pcs}}};")
        self.emit(0, "static void m_successors(ctx_t *C, const int64_t *v) {")
        if not compact:
            self.locals()
        if compact:
            for r in runs_n:
                self.emit(1, f"fn{self.proc_ids[r[0].process]}(C, v, FN_NORMAL | FN_MAIN);")
        else:
            self.block(1, normal, "main")
        if timeout:
            self.emit(1, "if (C->nsteps == 0 && !C->ex) {")
            if compact:
                for r in runs_t:
                    self.emit(2, f"fn{self.proc_ids[r[0].process]}(C, v, FN_TIMEOUT | FN_MAIN);")
            else:
                self.block(2, timeout, "main")
            self.emit(1, "}")
        self.emit(1, "(void)C; (void)v;")
        self.emit(0, "}")
        self.ample_tables()

    def ample_tables(
        self,
        prefix: str = "m_por",
        visible: frozenset[str] | None = None,
        safe: SafeConditions | None = None,
    ) -> None:
        """The safe locations of partial-order reduction (:mod:`absmc.ir.dependency`; used by
        ``por_order`` in runtime_tail.c when the search reduces): per candidate process in order,
        its index, the slot of its pc (-1: none, every state counts as safe) and its safe pc
        values (``m_por_locs[m_por_off[r] .. m_por_off[r + 1])``); ``m_por_cond(j, v, C)``: the
        condition under which the location ``m_por_locs[j]`` is safe (SPIN's conditional safety
        of ``xr``/``xs`` channels, :func:`absmc.ir.dependency.safe_conditions`; 1 when
        unconditional). ``prefix`` names the tables (``m_por``: the safety search's;
        ``m_lpor``: the LTL product search's, :meth:`ltl_ample_source`); ``visible``: the
        variables no step of an ample set may write (default: those of the selected state
        properties, :func:`~absmc.ir.dependency.visible_variables`); ``safe``: the locations
        and conditions, when computed already."""
        sys = self.system
        # none without ``por`` (the -N product library is spared the dependency analysis)
        if safe is None and visible is None:  # the safety search: runs and deaths may race
            safe = self._safety_conditions()
        elif safe is None:
            safe = safe_conditions(sys, visible or frozenset())
        procs: list[str] = []
        slots: list[str] = []
        offs: list[str] = ["0"]
        locs: list[str] = []
        conds: list[tuple[int, Expr]] = []
        for p in sys.processes:
            if p.name not in safe:
                continue
            procs.append(str(self.proc_ids[p.name]))
            if p.pc is None:
                slots.append("-1")
            else:
                slots.append(str(self.layout.fields[sys.index_of[p.pc]].slot))
                for k in sorted(x for x in safe[p.name] if x is not None):
                    if safe[p.name][k] != TRUE:
                        conds.append((len(locs), safe[p.name][k]))
                    locs.append(c_const(k))
            offs.append(str(len(locs)))
        self.emit(0, f"static int {prefix}_cond(int j, const int64_t *v, ctx_t *C) {{")
        # each conjunct once (the dependency analysis repeats the same pc tests: on SPIN's
        # mobile1 example, 0.9 MB of C without this), each distinct condition once
        self.lines += cond_switch(conds, self.tr.cb)
        self.emit(1, "(void)v; (void)C; (void)j;")
        self.emit(1, "return 1;")
        self.emit(0, "}")
        self.emit(0, f"#define {prefix.upper()[2:]}_ROWS {len(procs)}")
        self.emit(0, f"static const int32_t {prefix}_proc[] = {{{', '.join(procs) or '0'}}};")
        self.emit(0, f"static const int32_t {prefix}_slot[] = {{{', '.join(slots) or '0'}}};")
        self.emit(0, f"static const int32_t {prefix}_off[] = {{{', '.join(offs)}}};")
        self.emit(0, f"static const int64_t {prefix}_locs[] = {{{', '.join(locs) or '0'}}};")

    def _safety_conditions(self) -> SafeConditions:
        """The safety search's safe locations (none without ``por``), computed once: from the
        forked child :meth:`source` started, else here."""
        if self._safe is None:
            if not self.por:
                self._safe = {}
            elif self._analysis is not None:
                self._safe, self._analysis = self._analysis.result(), None
            else:
                visible = visible_variables(self.props)
                self._safe = safe_conditions(self.system, visible, races=True)
        return self._safe

    def ltl_ample_source(
        self,
        visible: frozenset[str],
        fair: bool = False,
        conditions: tuple[SafeConditions, SafeConditions] | None = None,
        forward: bool = False,
    ) -> str:
        """C for the LTL product search's safe locations (``m_lpor_*``, ``LPOR_ROWS``; as
        :meth:`ample_tables` with ``visible``: the variables the selected state properties and
        the automata's guards read, SPIN's visibility condition C2 for the never claim),
        with ``fair``, ``m_lfpor_*`` for weak fairness (:mod:`~absmc.native.fairpor`; else none),
        and with ``forward`` ``m_lfwd``, per command whether it is forward (CNDFS's static
        cycle proviso, :func:`~absmc.ir.dependency.forward_commands`).
        ``conditions``: :func:`ltl_conditions` of the same arguments, when computed already.
        Call after :meth:`source` (it uses the same translator)."""
        kept = self.lines
        self.lines = []
        try:
            safe, fair_safe = conditions or ltl_conditions(self.system, visible, fair)
            self.ample_tables("m_lpor", visible, safe)
            self.ample_tables("m_lfpor", visible, fair_safe)
            if forward:  # CNDFS's static proviso: the forward commands
                fwd = ", ".join("1" if f else "0" for f in forward_commands(self.system)) or "0"
                self.emit(0, f"static const uint8_t m_lfwd[NCMD > 0 ? NCMD : 1] = {{{fwd}}};")
            return "\n".join(self.lines) + "\n"
        finally:
            self.lines = kept

    # -- properties, end states, packing ---------------------------------------------------
    def properties(self) -> None:
        tr = self.tr
        self.emit(0, "static int m_violated(ctx_t *C, const int64_t *v, int32_t *out) {")
        self.emit(1, "int n = 0; int64_t x;")
        for k, p in enumerate(self.props):
            if p.kind not in STATE_PROPERTY_KINDS:
                continue
            bad = f"!({tr.cb(p.expr)})" if p.kind == "invariant" else tr.cb(p.expr)
            self.emit(1, f"C->err = 0; x = {bad};")
            self.emit(1, f"if (x || C->err) out[n++] = {k};")
        self.emit(1, "(void)C; (void)v; (void)x; (void)out;")
        self.emit(1, "return n;")
        self.emit(0, "}")
        self.emit(0, "static int m_valid_end(ctx_t *C, const int64_t *v) {")
        ve = self.system.valid_end
        if ve is None:
            self.emit(1, "(void)C; (void)v; return 0;")
        else:
            self.emit(1, f"C->err = 0; int64_t x = {tr.cb(ve)};")
            self.emit(1, "return C->err ? 0 : (x != 0);")
        self.emit(0, "}")

    def packing(self) -> None:
        lay = self.layout
        lit = self.tr.lit
        parts: list[list[str]] = [[] for _ in range(lay.words)]
        temps: list[str] = []
        for f in lay.fields:
            if f.words > 2:  # value - lo as a big_t, its words into the field's
                u = f"u{len(temps)}"
                val = f"b_load(v + {f.slot}, {f.words})"
                temps.append(f"big_t {u} = {f'b_subu({val}, {lit(f.lo, 2)})' if f.lo else val};")
                if f.width <= 64:
                    x = f"{u}.w[0]"
                    parts[f.word].append(f"({x} << {f.shift})" if f.shift else x)
                for j in range((f.width + 63) // 64 if f.width > 64 else 0):
                    parts[f.word + j].append(f"{u}.w[{j}]")
                continue
            val = f"W128(v[{f.slot + 1}], v[{f.slot}])" if f.wide else f"v[{f.slot}]"
            if f.signed:
                parts[f.word].append(f"(uint64_t){val}")
                continue
            off = f"({val} - {c_const(f.lo)})" if f.lo else val
            if f.width > 64:
                u = f"((unsigned __int128){off})"
                parts[f.word].append(f"(uint64_t){u}")
                parts[f.word + 1].append(f"(uint64_t)({u} >> 64)")
                continue
            x = f"(uint64_t){off}"
            parts[f.word].append(f"({x} << {f.shift})" if f.shift else x)
        self.emit(0, "static void m_pack(const int64_t *v, uint64_t *w) {")
        for t in temps:
            self.emit(1, t)
        for k in range(lay.words):
            self.emit(1, f"w[{k}] = {' | '.join(parts[k]) or '0'};")
        self.emit(0, "}")
        self.emit(0, "static void m_unpack(const uint64_t *w, int64_t *v) {")
        for f in lay.fields:
            if f.signed:
                self.emit(1, f"v[{f.slot}] = (int64_t)w[{f.word}];")
                continue
            if f.words > 2:
                self.emit(1, "{ big_t y; memset(&y, 0, sizeof y);")
                if f.width <= 64:
                    x = f"(w[{f.word}] >> {f.shift})" if f.shift else f"w[{f.word}]"
                    self.emit(2, f"y.w[0] = {x} & {_mask(f.width)};")
                else:
                    n = (f.width + 63) // 64
                    for j in range(n):
                        last = j == n - 1 and f.width % 64
                        x = (
                            f"w[{f.word + j}] & {_mask(f.width % 64)}"
                            if last
                            else f"w[{f.word + j}]"
                        )
                        self.emit(2, f"y.w[{j}] = {x};")
                if f.lo:
                    self.emit(2, f"y = b_addu(y, {lit(f.lo, 2)});")
                self.emit(2, f"b_store(v + {f.slot}, y, {f.words}); }}")
                continue
            if f.width > 64:
                hi = f"(w[{f.word + 1}] & {_mask(f.width - 64)})"
                x = f"(__int128)(((unsigned __int128){hi} << 64) | w[{f.word}])"
            else:
                x = f"(w[{f.word}] >> {f.shift})" if f.shift else f"w[{f.word}]"
                if f.width < 64:
                    x = f"({x} & {_mask(f.width)})"
                x = f"(__int128){x}" if f.wide else f"(int64_t){x}"
            if f.lo:
                x = f"{x} + {c_const(f.lo)}"
            if f.wide:
                self.emit(
                    1,
                    f"{{ __int128 y = {x}; v[{f.slot}] = (int64_t)(uint64_t)y; "
                    f"v[{f.slot + 1}] = (int64_t)(y >> 64); }}",
                )
            else:
                self.emit(1, f"v[{f.slot}] = {x};")
        self.emit(1, "(void)w; (void)v;")
        self.emit(0, "}")
        self.emit(0, "static int m_in_range(const int64_t *v) {")
        for f, var in zip(lay.fields, self.system.variables, strict=True):
            if f.words > 2:
                assert isinstance(var.sort, RangeSort)
                val = f"b_load(v + {f.slot}, {f.words})"
                self.emit(1, f"if ({self._outside(val, 2, var.sort)}) return 0;")
                continue
            val = f"W128(v[{f.slot + 1}], v[{f.slot}])" if f.wide else f"v[{f.slot}]"
            if isinstance(var.sort, RangeSort):
                lo, hi = c_const(var.sort.lo), c_const(var.sort.hi)
                self.emit(1, f"if ({val} < {lo} || {val} > {hi}) return 0;")
            elif isinstance(var.sort, BoolSort):
                self.emit(1, f"if ({val} != 0 && {val} != 1) return 0;")
        self.emit(1, "(void)v; return 1;")
        self.emit(0, "}")

    def source(self, head: str, tail: str) -> str:
        """The whole C translation unit: defines, ``head``, the model code, ``tail``. With
        partial-order reduction, a System of :data:`FORK_ANALYSIS_MIN_COMMANDS` commands or more
        has the safety search's safe locations analysed in a forked child meanwhile
        (:class:`~absmc.native.background.ForkedValue`; SPIN's mobile1: 1.2 s of analysis beside
        the 0.75 s of generating its C, one after the other before)."""
        if (
            self.por
            and self._safe is None
            and len(self.system.commands) >= FORK_ANALYSIS_MIN_COMMANDS
        ):
            from absmc.native.background import ForkedValue  # it imports this module

            system, visible = self.system, visible_variables(self.props)
            self._analysis = ForkedValue(lambda: safe_conditions(system, visible, races=True))
        try:
            return self._source(head, tail)
        finally:  # a generation that failed (Unsupported, Ctrl-C) does not wait for the child
            if self._analysis is not None:
                self._analysis.cancel()
                self._analysis = None

    def _source(self, head: str, tail: str) -> str:
        sys = self.system
        self.lines = []
        self.shapes = {}
        self.functions()
        if not self.share and sum(map(len, self.lines)) > SHARE_MIN_CHARS:
            self.share, self.lines = True, []  # again, with the commands' code shared by shape
            self.functions()
        rows: list[str] = []  # the tables of guards the process functions use at -O0
        if self.share:
            self.lines, rows = tabulate(share_processes(self.lines))
        self.properties()
        self.packing()
        if self.tr.past128:  # values past 128 bits in expressions only: again with big_t
            self.bk = big_words(self.system, self.layout, self.props, 3)
            self.tr = CExpr(self.system, self.layout, bk=self.bk)
            return self._source(head, tail)
        defines = [
            f"#define NV {self.n}",
            f"#define NW {self.layout.words}",
            f"#define NCMD {len(sys.commands)}",
            f"#define NPROP {len(self.props)}",
            f"#define NFN {len(sys.processes)}",
        ]
        if self.bk:  # integers past 128 bits: big_t (runtime_big.c) after the head
            head = f"{head}\n#define BK {self.bk}\n{runtime_big()}"
        shaped = shape_functions(self.shapes, self.n)
        # the mark: where the head every translation unit shares ends (native/parts.py)
        return "\n".join([*defines, head, MODEL_MARK, *shaped, *rows, *self.lines, tail]) + "\n"
