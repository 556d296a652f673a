"""C source for a System: the model-specific part of the native back end.

The generated code has the same semantics as :mod:`absmc.ir.compile` (the generated-Python back
end): commands in order, dispatched on program counters, timeout commands only when nothing else
is enabled, exclusive chains followed depth-first and cut at a repeated (state, process) pair,
model errors and failed assertions as failures (kinds below), C division and remainder,
wrap-around ranges. Values are ``int64_t``; an operation whose exact result may leave the 64-bit
range (unbounded ``INT`` data, wide products) is checked and sets the context's ``ovf`` flag,
which makes the caller fall back to the Python back end — never a silently wrong value.

Failure kinds (``add_fail(C, ci, kind, a, b)``): 1 — error condition ``a`` of the command
(``Command.errors[a]``); 2 — division by zero; 3 — failed assertion of property ``a`` (an index
into the selected properties); 4 — value ``b`` assigned to variable ``a`` outside its range.

State packing (:class:`Layout`): each variable gets a bit field of a 64-bit word — a range
``lo..hi`` stores ``value - lo`` in ``bit_length(hi - lo)`` bits, a bool one bit, an unbounded
``INT`` a whole word — placed first-fit by decreasing width, so a packed state is ``NW`` words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from absmc.ir.compile import (
    _dispatch_value,
    _runs,
    _strip_dispatch,
    choose_dispatch_var,
    system_depth,
)
from absmc.ir.expr import Const, Expr, Op, Var, conj, conjuncts
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.system import STATE_PROPERTY_KINDS, Command, Property, System
from absmc.ir.walker import ExprWalker

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

#: expressions deeper than this are left to the Python back end (C compilers recurse on them)
MAX_C_DEPTH = 2000


class Unsupported(Exception):
    """The System uses something the native back end does not translate (the caller uses the
    Python back end): a constant outside 64 bits, a range wider than 64 bits, very deep
    expressions."""


Interval = tuple[int, int] | None


def c_const(v: int) -> str:
    """A C literal for the 64-bit integer ``v``. Raises :class:`Unsupported` outside 64 bits."""
    if not INT64_MIN <= v <= INT64_MAX:
        raise Unsupported(f"constant {v} does not fit in 64 bits")
    if v == INT64_MIN:
        return "(-INT64_C(9223372036854775807) - 1)"
    return f"INT64_C({v})" if not -(1 << 31) <= v < (1 << 31) else str(v)


def _fits64(iv: Interval) -> bool:
    return iv is not None and iv[0] >= INT64_MIN and iv[1] <= INT64_MAX


def _pow2_bound(iv: Interval) -> Interval:
    """An interval ``[-2^k, 2^k - 1]`` containing ``iv`` (what bitwise results stay within)."""
    if iv is None:
        return None
    m = max(abs(iv[0]), abs(iv[1]) + 1)
    k = m.bit_length()
    return (-(1 << k), (1 << k) - 1)


class CExpr(ExprWalker[tuple[str, Interval]]):
    """IR expression -> (C source over ``v[i]`` and the context ``C``, interval of its values
    or ``None``). Operations whose result interval is not known to fit in 64 bits are checked
    (``ck_add`` ...)."""

    def __init__(self, system: System, var: str = "v") -> None:
        super().__init__()
        self.system = system
        self.var = var

    def c(self, e: Expr) -> str:
        """The C source of ``e``."""
        return self.walk(e)[0]

    def walk_const(self, e: Const) -> tuple[str, Interval]:
        return c_const(e.value), (e.value, e.value)

    def walk_var(self, e: Var) -> tuple[str, Interval]:
        i = self.system.index_of[e.name]
        sort = self.system.by_name[e.name].sort
        if isinstance(sort, RangeSort):
            iv: Interval = (sort.lo, sort.hi)
        elif isinstance(sort, BoolSort):
            iv = (0, 1)
        else:
            iv = (INT64_MIN, INT64_MAX)
        return f"{self.var}[{i}]", iv

    def walk_op(self, e: Op, a: list[tuple[str, Interval]]) -> tuple[str, Interval]:
        o = str(e.op)
        s = [x[0] for x in a]
        ivs = [x[1] for x in a]
        if o in ("==", "!=", "<", "<=", ">", ">="):
            return f"({s[0]} {o} {s[1]})", (0, 1)
        if o == "&&":
            return "(" + " && ".join(s) + ")", (0, 1)
        if o == "||":
            return "(" + " || ".join(s) + ")", (0, 1)
        if o == "!":
            return f"(!{s[0]})", (0, 1)
        if o == "=>":
            return f"(!{s[0]} || {s[1]})", (0, 1)
        if o == "ite":
            b, c = ivs[1], ivs[2]
            iv = (min(b[0], c[0]), max(b[1], c[1])) if b and c else None
            return f"({s[0]} ? {s[1]} : {s[2]})", iv
        if o == "neg":
            x = ivs[0]
            iv = (-x[1], -x[0]) if x else None
            return (f"(-{s[0]})", iv) if _fits64(iv) else (f"ck_neg(C, {s[0]})", iv)
        if o == "~":
            x = ivs[0]
            return f"(~{s[0]})", ((-x[1] - 1, -x[0] - 1) if x else None)
        if o in ("+", "-", "*"):
            x, y = ivs
            iv = None
            if x and y:
                if o == "+":
                    iv = (x[0] + y[0], x[1] + y[1])
                elif o == "-":
                    iv = (x[0] - y[1], x[1] - y[0])
                else:
                    p = [u * w for u in x for w in y]
                    iv = (min(p), max(p))
            if _fits64(iv):
                return f"({s[0]} {o} {s[1]})", iv
            fn = {"+": "ck_add", "-": "ck_sub", "*": "ck_mul"}[o]
            return f"{fn}(C, {s[0]}, {s[1]})", iv
        if o in ("/", "%"):
            x, y = ivs
            iv = None
            if x is not None:
                m = max(abs(x[0]), abs(x[1]))
                iv = (-m, m)
            fn = "i_div" if o == "/" else "i_mod"
            return f"{fn}(C, {s[0]}, {s[1]})", iv
        if o in ("&", "|", "^"):
            x, y = _pow2_bound(ivs[0]), _pow2_bound(ivs[1])
            iv = (min(x[0], y[0]), max(x[1], y[1])) if x and y else None
            return f"({s[0]} {o} {s[1]})", iv
        if o == "<<":
            return f"i_shl(C, {s[0]}, {s[1]})", None
        if o == ">>":
            x = ivs[0]
            iv = (min(x[0], 0), max(x[1], 0)) if x else None
            return f"i_shr({s[0]}, {s[1]})", iv
        if o == "select":
            # element i, the last one when i is out of range (ir.arrays; the reference
            # evaluator's meaning): only the chosen element is evaluated
            elems = s[1:]
            known = [x for x in ivs[1:] if x is not None]
            iv = (
                (min(x[0] for x in known), max(x[1] for x in known))
                if len(known) == len(elems)
                else None
            )
            self.n_select = getattr(self, "n_select", 0) + 1
            t = f"_si{self.n_select}"  # a fresh name: selects may nest
            out = elems[-1]
            for k in range(len(elems) - 2, -1, -1):
                out = f"({t} == {k} ? {elems[k]} : {out})"
            return f"({{ int64_t {t} = {s[0]}; {out}; }})", iv
        raise Unsupported(f"operator {o}")


@dataclass(frozen=True)
class Field:
    """Where a variable lives in a packed state: word, bit offset, width (bits), lowest value
    (``value - lo`` is stored), and whether it is a whole signed word (unbounded ``INT``)."""

    word: int
    shift: int
    width: int
    lo: int
    signed: bool


@dataclass(frozen=True)
class Layout:
    """The packed state vector: one :class:`Field` per variable (declaration order) in ``words``
    64-bit words."""

    fields: tuple[Field, ...]
    words: int

    @property
    def bits(self) -> int:
        """Bits actually used by the fields."""
        return sum(f.width for f in self.fields)


def layout(system: System) -> Layout:
    """Bit fields for the variables of ``system`` (first fit by decreasing width). Raises
    :class:`Unsupported` for a range wider than 64 bits."""
    widths: list[tuple[int, int, bool]] = []  # width, lo, signed
    for v in system.variables:
        if isinstance(v.sort, RangeSort):
            span = v.sort.hi - v.sort.lo
            w = max(1, span.bit_length())
            if w > 64 or not INT64_MIN <= v.sort.lo <= INT64_MAX:
                raise Unsupported(f"the range of {v.name} is wider than 64 bits")
            widths.append((w, v.sort.lo, False))
        elif isinstance(v.sort, BoolSort):
            widths.append((1, 0, False))
        else:
            widths.append((64, 0, True))
    order = sorted(range(len(widths)), key=lambda i: -widths[i][0])
    free: list[int] = []  # bits used per word
    placed: dict[int, Field] = {}
    for i in order:
        w, lo, signed = widths[i]
        for k, used in enumerate(free):
            if used + w <= 64:
                placed[i] = Field(k, used, w, lo, signed)
                free[k] = used + w
                break
        else:
            placed[i] = Field(len(free), 0, w, lo, signed)
            free.append(w)
    return Layout(tuple(placed[i] for i in range(len(widths))), max(1, len(free)))


def _mask(width: int) -> str:
    return "UINT64_C(0xffffffffffffffff)" if width == 64 else f"UINT64_C({(1 << width) - 1})"


class CGen:
    """Generates the model part of the C source (see the module docstring)."""

    def __init__(self, system: System, props: Sequence[Property]) -> None:
        if system_depth(system) > MAX_C_DEPTH:
            raise Unsupported(f"expressions nested deeper than {MAX_C_DEPTH} levels")
        self.system = system
        self.props = tuple(props)
        self.tr = CExpr(system)
        self.n = len(system.variables)
        self.lines: list[str] = []
        self.proc_ids = {p.name: k for k, p in enumerate(system.processes)}
        self.assert_index = {p.name: k for k, p in enumerate(self.props) if p.kind == "assert"}
        self.layout = layout(system)
        self.uid = 0
        for v in system.variables:
            c_const(v.init)
            if isinstance(v.sort, RangeSort) and not v.sort.lo <= v.init <= v.sort.hi:
                raise Unsupported(f"initial value of {v.name} outside its range")

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

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
        self.emit(ind, "{")
        i = ind + 1
        self.emit(i, "int64_t x;")
        self.emit(i, "C->err = 0;")
        for k, (cond, _msg) in enumerate(c.errors):
            cnd = cond if var is None else _strip_dispatch(cond, var, value)
            self.emit(i, f"x = {tr.c(cnd)};")
            self.emit(i, f"if (C->err) {{ add_fail(C, {c.index}, 2, 0, 0); goto {done}; }}")
            self.emit(i, f"if (x) {{ add_fail(C, {c.index}, 1, {k}, 0); goto {done}; }}")
        g = tr.c(guard)
        if g != "1":
            self.emit(i, f"x = {g};")
            self.emit(i, f"if (C->err) {{ add_fail(C, {c.index}, 2, 0, 0); goto {done}; }}")
            self.emit(i, f"if (!x) goto {done};")
        self.emit(i, f"int64_t t[{max(self.n, 1)}];")
        if self.n:
            self.emit(i, "memcpy(t, v, sizeof t);")
        checks: list[tuple[str, int, RangeSort]] = []
        temps: list[tuple[str, int]] = []
        for k, (name, rhs) in enumerate(c.updates):
            idx = sys.index_of[name]
            sort = sys.by_name[name].sort
            src = tr.c(rhs)
            if isinstance(sort, BoolSort):
                src = f"(({src}) ? 1 : 0)"
            tmp = f"u{k}"
            self.emit(i, f"int64_t {tmp} = {src};")
            if isinstance(sort, RangeSort):
                if sort.overflow == "wrap":
                    self.emit(
                        i,
                        f"if ({tmp} < {c_const(sort.lo)} || {tmp} > {c_const(sort.hi)}) "
                        f"{tmp} = i_wrap({tmp}, {c_const(sort.lo)}, {c_const(sort.size)});",
                    )
                else:
                    checks.append((tmp, idx, sort))
            temps.append((tmp, idx))
        if c.updates:
            self.emit(i, f"if (C->err) {{ add_fail(C, {c.index}, 2, 0, 0); goto {done}; }}")
        for name, cond in c.asserts:
            if name not in self.assert_index:
                continue
            self.emit(i, f"x = {tr.c(cond)};")
            self.emit(i, f"if (C->err) {{ add_fail(C, {c.index}, 2, 0, 0); goto {done}; }}")
            self.emit(i, f"if (!x) add_fail(C, {c.index}, 3, {self.assert_index[name]}, 0);")
        for tmp, idx, sort in checks:
            self.emit(
                i,
                f"if ({tmp} < {c_const(sort.lo)} || {tmp} > {c_const(sort.hi)}) "
                f"{{ add_fail(C, {c.index}, 4, {idx}, {tmp}); goto {done}; }}",
            )
        for tmp, idx in temps:
            self.emit(i, f"t[{idx}] = {tmp};")
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
        else:  # both: the sink chosen by the caller's flags
            self.emit(i, f"if (flags & FN_MAIN) {{ {main} }} else fn_push(C, {c.index}, t, {f});")
        self.emit(ind, "}")
        self.emit(ind, f"{done}:;")

    def block(self, ind: int, cmds: Sequence[Command], mode: str) -> None:
        """``cmds`` in order, dispatched on program counters where possible (as in
        :mod:`absmc.ir.compile`)."""
        sys = self.system
        for run in _runs(cmds):
            var = choose_dispatch_var(sys, run)
            if var is None:
                for c in run:
                    self.command(ind, c, c.guard, None, 0, mode)
                continue
            groups: dict[int, list[Command]] = {}
            for c in run:
                value = _dispatch_value(c, var)
                assert value is not None
                groups.setdefault(value, []).append(c)
            self.emit(ind, f"switch (v[{sys.index_of[var]}]) {{")
            for value, grp in groups.items():
                self.emit(ind, f"case {c_const(value)}: {{")
                for c in grp:
                    guard = conj(list(conjuncts(_strip_dispatch(c.guard, var, value))))
                    self.command(ind + 1, c, guard, var, value, mode)
                self.emit(ind + 1, "break;")
                self.emit(ind, "}")
            self.emit(ind, "default: break;")
            self.emit(ind, "}")

    def functions(self) -> None:
        """One step function per process, the dispatch tables and the successor function. When
        each process's commands are one run in command order (always in Promela), the successor
        function calls the process functions (each command's code exists once); otherwise it
        has its own copy of the commands."""
        sys = self.system
        normal = [c for c in sys.commands if "timeout" not in c.flags]
        timeout = [c for c in sys.commands if "timeout" in c.flags]
        runs_n, runs_t = _runs(normal), _runs(timeout)
        compact = all(len({r[0].process for r in runs}) == len(runs) for runs in (runs_n, runs_t))
        mode = "both" if compact else "fn"
        for p in sys.processes:
            k = self.proc_ids[p.name]
            mine = [c for c in sys.commands if c.process == p.name]
            self.emit(0, f"static void fn{k}(ctx_t *C, const int64_t *v, int flags) {{")
            self.emit(1, "if (flags & FN_NORMAL) {")
            self.block(2, [c for c in mine if "timeout" not in c.flags], mode)
            self.emit(1, "}")
            tmine = [c for c in mine if "timeout" in c.flags]
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
        self.emit(0, "static void m_successors(ctx_t *C, const int64_t *v) {")
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

    # -- properties, end states, packing ---------------------------------------------------
    def properties(self) -> None:
        tr = self.tr
        self.emit(0, "static int m_violated(ctx_t *C, const int64_t *v, int32_t *out) {")
        self.emit(1, "int n = 0; int64_t x;")
        for k, p in enumerate(self.props):
            if p.kind not in STATE_PROPERTY_KINDS:
                continue
            bad = f"!({tr.c(p.expr)})" if p.kind == "invariant" else tr.c(p.expr)
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
            self.emit(1, f"C->err = 0; int64_t x = {tr.c(ve)};")
            self.emit(1, "return C->err ? 0 : (x != 0);")
        self.emit(0, "}")

    def packing(self) -> None:
        lay = self.layout
        self.emit(0, "static void m_pack(const int64_t *v, uint64_t *w) {")
        for k in range(lay.words):
            parts = []
            for i, f in enumerate(lay.fields):
                if f.word != k:
                    continue
                if f.signed:
                    parts.append(f"(uint64_t)v[{i}]")
                else:
                    val = f"(uint64_t)(v[{i}] - {c_const(f.lo)})" if f.lo else f"(uint64_t)v[{i}]"
                    parts.append(f"({val} << {f.shift})" if f.shift else val)
            self.emit(1, f"w[{k}] = {' | '.join(parts) or '0'};")
        self.emit(0, "}")
        self.emit(0, "static void m_unpack(const uint64_t *w, int64_t *v) {")
        for i, f in enumerate(lay.fields):
            if f.signed:
                self.emit(1, f"v[{i}] = (int64_t)w[{f.word}];")
                continue
            x = f"(w[{f.word}] >> {f.shift})" if f.shift else f"w[{f.word}]"
            if f.width < 64:
                x = f"({x} & {_mask(f.width)})"
            x = f"(int64_t){x}"
            if f.lo:
                x = f"{x} + {c_const(f.lo)}"
            self.emit(1, f"v[{i}] = {x};")
        self.emit(1, "(void)w; (void)v;")
        self.emit(0, "}")
        self.emit(0, "static int m_in_range(const int64_t *v) {")
        for i, var in enumerate(self.system.variables):
            if isinstance(var.sort, RangeSort):
                lo, hi = c_const(var.sort.lo), c_const(var.sort.hi)
                self.emit(1, f"if (v[{i}] < {lo} || v[{i}] > {hi}) return 0;")
            elif isinstance(var.sort, BoolSort):
                self.emit(1, f"if (v[{i}] != 0 && v[{i}] != 1) return 0;")
        self.emit(1, "(void)v; return 1;")
        self.emit(0, "}")

    def source(self, head: str, tail: str) -> str:
        """The whole C translation unit: defines, ``head``, the model code, ``tail``."""
        sys = self.system
        self.lines = []
        self.functions()
        self.properties()
        self.packing()
        defines = [
            f"#define NV {self.n}",
            f"#define NW {self.layout.words}",
            f"#define NCMD {len(sys.commands)}",
            f"#define NPROP {len(self.props)}",
            f"#define NFN {len(sys.processes)}",
        ]
        return "\n".join([*defines, head, *self.lines, tail]) + "\n"
