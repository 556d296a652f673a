"""PA+TP: predicate abstraction with a theorem prover for the component (Bao's thesis, ch. 2.3
and Fig. 2.2(a), after Păsăreanu, Pelánek and Visser, paper 000, Figs. 2–3).

Concrete states stay on the search stack (only real states reach the environment); the store
keeps the abstract state: the control part (each thread's call stack of (function, pc), its
status, the synchronization cells) and, per thread, the truth values of the predicates of the
function it runs. The predicates of a function are Python expressions over its locals and the
module's globals: the conditions of its branches and assertions (``Φ := Guards(prog)``, Fig.
2.1 line 2) without calls (``len`` aside), the user's ``--predicate`` texts, and those the
refinement adds.

Every transition a round executes is checked for exactness with the prover (Z3 via
:class:`absmc.logic.prover.Prover`): the instructions the transition ran are read back as
assignments, element stores and branch conditions (the thesis's symbolic simulation of the
accumulated effect of a transition sequence, ch. 4 Theorem 1), each predicate φ of the
function is carried back to its weakest precondition ``wp(φ, t)`` by substitution, and the
transition is exact when the abstract source state ``α(s)`` (the conjunction of its predicate
literals) decides the path condition and ``wp(φ, t)`` for every φ. Where it does not, ``wp(φ,
t)`` (a Python expression again) is added to the function's predicates for the next round.

A round proves ``holds`` when it found no violation and either no abstract state matched two
different concrete states (the search was exact), or every transition was checked and found
exact (the abstraction is a bisimulation, paper 000 Thm. 1). Transitions the prover cannot read
(calls, ``for`` steps, stores into lists or globals, exceptions, synchronization) are
*unchecked*: they still give predicates where a weakest precondition exists, but no proof.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from absmc.component.abstraction import AbstractMatchStore
from absmc.component.machine import ComponentSemantics
from absmc.component.translate import ASSERT, BRANCH, EXEC, FOR_NEXT, JUMP, FuncCode
from absmc.component.values import UNBOUND
from absmc.errors import OptionError
from absmc.ir.expr import Expr, Op, Var, conj, const, neg
from absmc.ir.steps import State
from absmc.logic.prover import Prover, Validity

#: the most predicates one function may gain by refinement
MAX_PREDICATES = 64

_PURE_CALLS = frozenset({"len"})


class Unsupported(Exception):
    """A Python construct the prover translation does not cover."""


def parse_predicate(text: str) -> ast.expr:
    """``text`` as a Python expression AST. Raises ``OptionError`` (option ``predicate``)
    naming the column when it is not one."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        col = f" at column {e.offset}" if e.offset else ""
        raise OptionError(
            f"'{text}' is not a Python expression{col} ({e.msg})", "predicate"
        ) from None
    return tree.body


def _has_impure_call(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and not (
            isinstance(n.func, ast.Name) and n.func.id in _PURE_CALLS
        ):
            return True
        if isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield)):
            return True
    return False


def _pure(text: str) -> bool:
    """``text`` is an expression without calls (``len`` aside) and comprehensions: evaluating
    it changes nothing (a comprehension or lambda may call the environment natively)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return False
    comps = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    return not _has_impure_call(tree) and not any(isinstance(n, comps) for n in ast.walk(tree))


def _condition(ins_text: str, op: int) -> ast.expr | None:
    """The condition of a branch (``if c``/``while c``/``elif c``) or an assertion text."""
    text = ins_text.strip()
    try:
        if op == ASSERT:
            stmt = ast.parse(text).body[0]
            return stmt.test if isinstance(stmt, ast.Assert) else None
        for kw in ("if ", "elif ", "while "):
            if text.startswith(kw):
                return ast.parse(text[len(kw) :].strip(), mode="eval").body
    except SyntaxError:
        return None
    return None


def range_loop(text: str) -> tuple[str, ast.expr, ast.expr, int] | None:
    """``for x in range(...)`` (a ``FOR_NEXT`` text) as (x, start, stop, step) with a constant
    positive step; None for other loops."""
    try:
        st = ast.parse(text.strip() + ": pass").body[0]
    except SyntaxError:
        return None
    if not (isinstance(st, ast.For) and isinstance(st.target, ast.Name)):
        return None
    it = st.iter
    if not (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and 1 <= len(it.args) <= 3
        and not it.keywords
    ):
        return None
    args = it.args
    step = 1
    if len(args) == 3:
        a = args[2]
        if not (isinstance(a, ast.Constant) and type(a.value) is int and a.value > 0):
            return None
        step = a.value
    start: ast.expr = args[0] if len(args) >= 2 else ast.Constant(0)
    stop = args[1] if len(args) >= 2 else args[0]
    if _has_impure_call(start) or _has_impure_call(stop):
        return None
    return st.target.id, start, stop, step


def guard_predicates(fc: FuncCode) -> list[str]:
    """The conditions of ``fc``'s branches and assertions that call nothing but ``len``, and
    the loop conditions ``x < stop`` of its ``for x in range(...)`` loops (the thesis's
    initial predicates, the guards of Fig. 2.1 line 2), as Python source texts."""
    out: list[str] = []
    for ins in fc.instrs:
        if ins.op == FOR_NEXT:
            loop = range_loop(ins.text)
            if loop is not None:
                text = ast.unparse(
                    ast.Compare(ast.Name(loop[0], ast.Load()), [ast.Lt()], [loop[2]])
                )
                if text not in out:
                    out.append(text)
            continue
        if ins.op not in (BRANCH, ASSERT):
            continue
        cond = _condition(ins.text, ins.op)
        if cond is None or _has_impure_call(cond):
            continue
        text = ast.unparse(cond)
        if text not in out:
            out.append(text)
    return out


# -- Python AST -> IR (for the prover) ------------------------------------------------------


def to_ir(node: ast.expr, formula: bool) -> Expr:
    """The IR of a Python integer expression (``formula``: as a truth value). Subscripts and
    ``len(x)`` become opaque integer variables named by their text (sound for validity:
    fewer constraints never make a formula valid). Raises :class:`Unsupported`."""
    if isinstance(node, ast.Constant):
        v = node.value
        if type(v) is bool:
            return const(v) if formula else const(int(v))
        if type(v) is int:
            return const(v != 0) if formula else const(v)
        raise Unsupported(repr(v))
    if isinstance(node, (ast.Name, ast.Subscript)) or (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _PURE_CALLS
        and len(node.args) == 1
        and not node.keywords
    ):
        if isinstance(node, ast.Subscript):
            _check_index(node)
        opaque = Var(ast.unparse(node))
        return Op("!=", (opaque, const(0))) if formula else opaque
    if isinstance(node, ast.BinOp):
        ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
        o = ops.get(type(node.op))
        if o is None:
            raise Unsupported(type(node.op).__name__)
        e: Expr = Op(o, (to_ir(node.left, False), to_ir(node.right, False)))
        return Op("!=", (e, const(0))) if formula else e
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            inner = neg(to_ir(node.operand, True))
            return inner if formula else Op("ite", (inner, const(1), const(0)))
        if isinstance(node.op, ast.USub):
            e = Op("neg", (to_ir(node.operand, False),))
            return Op("!=", (e, const(0))) if formula else e
        if isinstance(node.op, ast.UAdd):
            return to_ir(node.operand, formula)
        raise Unsupported("~")
    if isinstance(node, ast.Compare):
        cmp = {
            ast.Lt: "<",
            ast.LtE: "<=",
            ast.Gt: ">",
            ast.GtE: ">=",
            ast.Eq: "==",
            ast.NotEq: "!=",
        }
        parts: list[Expr] = []
        left = to_ir(node.left, False)
        for cop, r in zip(node.ops, node.comparators, strict=True):
            spelled = cmp.get(type(cop))
            if spelled is None:
                raise Unsupported(type(cop).__name__)
            right = to_ir(r, False)
            parts.append(Op(spelled, (left, right)))
            left = right
        f = conj(parts)
        return f if formula else Op("ite", (f, const(1), const(0)))
    if isinstance(node, ast.BoolOp) and formula:
        args = tuple(to_ir(v, True) for v in node.values)
        return Op("&&" if isinstance(node.op, ast.And) else "||", args)
    if isinstance(node, ast.IfExp):
        return Op(
            "ite", (to_ir(node.test, True), to_ir(node.body, formula), to_ir(node.orelse, formula))
        )
    raise Unsupported(type(node).__name__)


def _check_index(node: ast.Subscript) -> None:
    if isinstance(node.slice, ast.Slice):
        raise Unsupported("slice")


# -- statements as micro-operations and their weakest preconditions --------------------------

#: ("assign", {name: expr}) simultaneous; ("store", name, index, value); ("setattr", name,
#: attribute, value); ("assume", cond); ("havoc", names)
MicroOp = tuple[Any, ...]


def statement_ops(text: str) -> list[MicroOp] | None:
    """An assignment statement's text as micro-operations (None: not an assignment the
    refinement reads). Tuple assignments evaluate the right side first (fresh ``__vN``
    names), then store left to right, as Python does."""
    try:
        mod = ast.parse(text.strip())
    except SyntaxError:
        return None
    if len(mod.body) != 1:
        return None
    st = mod.body[0]
    if isinstance(st, ast.AugAssign):
        t = st.target
        value: ast.expr = ast.BinOp(copy.deepcopy(t), st.op, st.value)
        value = _as_load(value)
        return _target_ops(t, value)
    if isinstance(st, ast.AnnAssign) and st.value is not None:
        return _target_ops(st.target, st.value)
    if isinstance(st, ast.Assign) and len(st.targets) == 1:
        tgt = st.targets[0]
        if isinstance(tgt, ast.Tuple):
            if isinstance(st.value, ast.Tuple):
                if len(st.value.elts) != len(tgt.elts):
                    return None
                values = list(st.value.elts)
            else:  # unpacking: the i-th item of the value
                values = [
                    ast.Subscript(copy.deepcopy(st.value), ast.Constant(i), ast.Load())
                    for i in range(len(tgt.elts))
                ]
            fresh = {f"__v{i}": v for i, v in enumerate(values)}
            ops: list[MicroOp] = [("assign", fresh)]
            for i, tt in enumerate(tgt.elts):
                sub = _target_ops(tt, ast.Name(f"__v{i}", ast.Load()))
                if sub is None:
                    return None
                ops.extend(sub)
            return ops
        return _target_ops(tgt, st.value)
    return None


def _as_load(node: ast.expr) -> ast.expr:
    for n in ast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return node


def _target_ops(t: ast.expr, value: ast.expr) -> list[MicroOp] | None:
    if isinstance(t, ast.Name):
        return [("assign", {t.id: value})]
    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
        if isinstance(t.slice, ast.Slice):
            return None
        return [("store", t.value.id, _as_load(copy.deepcopy(t.slice)), value)]
    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
        return [("setattr", t.value.id, t.attr, value)]
    return None


def _subst(
    e: ast.expr,
    names: dict[str, ast.expr],
    store: tuple[str, ast.expr, ast.expr] | None = None,
    attr: tuple[str, str, ast.expr] | None = None,
) -> ast.expr:
    """``e`` with the names replaced (simultaneously), reads of the stored list turned into
    case splits and reads of the set attribute replaced; functional (``e`` is not changed,
    subtrees may be shared)."""

    def go(n: ast.expr) -> ast.expr:
        if isinstance(n, ast.Name):
            return names.get(n.id, n)
        if isinstance(n, ast.Constant):
            return n
        if isinstance(n, ast.BinOp):
            return ast.BinOp(go(n.left), n.op, go(n.right))
        if isinstance(n, ast.UnaryOp):
            return ast.UnaryOp(n.op, go(n.operand))
        if isinstance(n, ast.Compare):
            return ast.Compare(go(n.left), n.ops, [go(c) for c in n.comparators])
        if isinstance(n, ast.BoolOp):
            return ast.BoolOp(n.op, [go(v) for v in n.values])
        if isinstance(n, ast.IfExp):
            return ast.IfExp(go(n.test), go(n.body), go(n.orelse))
        if isinstance(n, ast.Tuple):
            return ast.Tuple([go(x) for x in n.elts], ast.Load())
        if isinstance(n, ast.Call):
            return ast.Call(go(n.func), [go(a) for a in n.args], n.keywords)
        if isinstance(n, ast.Attribute):
            if (
                attr is not None
                and isinstance(n.value, ast.Name)
                and n.value.id == attr[0]
                and n.attr == attr[1]
            ):
                return attr[2]
            return ast.Attribute(go(n.value), n.attr, ast.Load())
        if isinstance(n, ast.Subscript):
            out = ast.Subscript(go(n.value), go(n.slice), ast.Load())
            if store is not None and isinstance(n.value, ast.Name) and n.value.id == store[0]:
                test = ast.Compare(out.slice, [ast.Eq()], [store[1]])
                return ast.IfExp(test, store[2], out)
            return out
        return n

    return go(e)


def _subst_name(e: ast.expr, name: str, value: ast.expr) -> ast.expr:
    return _subst(e, {name: value})


def _mentions(e: ast.expr, names: frozenset[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(e))


def wp(phi: ast.expr, ops: Sequence[MicroOp]) -> ast.expr | None:
    """The weakest precondition of ``phi`` over the micro-operations ``ops`` (executed in
    order): substitution backwards (Dijkstra; assumptions add nothing to a precondition of a
    path already taken). None when ``phi`` depends on a havocked name."""
    cur = phi
    for o in reversed(ops):
        kind = o[0]
        if kind == "assign":
            cur = _subst(cur, o[1])
        elif kind == "store":
            cur = _subst(cur, {}, (o[1], o[2], o[3]))
        elif kind == "setattr":
            cur = _subst(cur, {}, None, (o[1], o[2], o[3]))
        elif kind == "havoc" and _mentions(cur, o[1]):
            return None
    return ast.fix_missing_locations(copy.deepcopy(cur))


# -- predicates, abstraction function and store ----------------------------------------------


@dataclass
class PredicateSet:
    """Per function index the predicates (text, AST, compiled code); ``common`` apply to every
    function (the user's)."""

    common: list[str]
    per_func: dict[int, list[str]] = field(default_factory=dict)

    def texts(self, fid: int) -> list[str]:
        return [*self.common, *self.per_func.get(fid, [])]

    def add(self, fid: int, text: str) -> bool:
        mine = self.per_func.setdefault(fid, [])
        if text in mine or text in self.common or len(mine) >= MAX_PREDICATES:
            return False
        mine.append(text)
        return True

    def total(self) -> int:
        return len(self.common) + sum(len(v) for v in self.per_func.values())


class PredicateAbstraction:
    """The abstraction function of PA+TP (see the module docstring): ``key(state)``, and
    ``bits(state, tid)`` (the truth values of thread ``tid``'s top-frame predicates; ``None``
    where a predicate raises or names an unbound variable)."""

    def __init__(self, sem: ComponentSemantics, preds: PredicateSet) -> None:
        self.sem = sem
        self.preds = preds
        self._code: dict[str, Any] = {}
        self._cache: tuple[int, State | None, list[tuple[Any, ...]]] = (-1, None, [])

    def _compiled(self, text: str) -> Any:
        c = self._code.get(text)
        if c is None:
            c = self._code[text] = compile(text, "<predicate>", "eval")
        return c

    def all_bits(self, s: State) -> list[tuple[Any, ...]]:
        if self._cache[1] is s:
            return self._cache[2]
        sem = self.sem
        _, threads = sem.materialize(s)
        ns = sem.prog.namespace
        out: list[tuple[Any, ...]] = []
        for th in threads:
            if not th.frames:
                out.append(())
                continue
            fid, _, loc, _ = th.frames[-1]
            fc = sem.prog.funcs[fid]
            env = {n: v for n, v in zip(fc.slots, loc, strict=False) if v is not UNBOUND}
            bits: list[Any] = []
            for text in self.preds.texts(fid):
                try:
                    bits.append(bool(eval(self._compiled(text), ns, env)))
                except Exception:
                    bits.append(None)
            out.append(tuple(bits))
        self._cache = (id(s), s, out)
        return out

    def key(self, s: State) -> Hashable:
        _, _, threads_enc, heap = cast(Any, s)
        control = []
        for name, _, st, frames, _ in threads_enc:
            kind = st if type(st) is not tuple else st[0]
            control.append((name, kind, tuple((f[0], f[1]) for f in frames)))
        sync_cells = tuple(c for c in heap if c[0] == "$")
        return (tuple(control), sync_cells, tuple(self.all_bits(s)))


class MatchStore(AbstractMatchStore):
    """Abstract matching on the predicate abstraction's key (PA+TP)."""

    def __init__(self, abstraction: PredicateAbstraction) -> None:
        super().__init__()
        self.abstraction = abstraction

    def insert(self, state: State) -> bool:
        return self.match(self.abstraction.key(state), state)

    def stats(self, stopped: str | None = None) -> dict[str, Any]:
        return {
            "store": "predicates",
            "merged": self.merged,
            "predicates": self.abstraction.preds.total(),
        }


# -- the exactness check of one transition ---------------------------------------------------


@dataclass
class _Path:
    readable: bool
    conditions: list[tuple[ast.expr, Expr]]
    pres: list[tuple[str, Expr] | None]


@dataclass
class ExactnessChecker:
    """Checks transitions for exactness with ``prover`` and collects refinement predicates
    (``new``: function index -> texts). Counts ``checked``, ``unchecked`` and ``imprecise``
    transitions (distinct by function, executed pcs and abstract source state)."""

    sem: ComponentSemantics
    abstraction: PredicateAbstraction
    prover: Prover
    checked: int = 0
    unchecked: int = 0
    imprecise: int = 0
    new: dict[int, list[str]] = field(default_factory=dict)
    _seen: set[Hashable] = field(default_factory=set)
    _ops: dict[tuple[int, int], list[MicroOp] | None] = field(default_factory=dict)
    _paths: dict[Hashable, _Path] = field(default_factory=dict)
    _asts: dict[str, ast.expr] = field(default_factory=dict)
    _irs: dict[str, Expr | None] = field(default_factory=dict)

    def transition(
        self, s: State, tid: int, t: State | None, log: Sequence[tuple[int, int]], failed: bool
    ) -> None:
        """One transition of thread ``tid`` from ``s`` to ``t`` that executed the
        instructions ``log`` ((function index, pc) each)."""
        if t is None:
            return
        frames_s = cast(Any, s)[2][tid][3]
        frames_t = cast(Any, t)[2][tid][3]
        bits = self.abstraction.all_bits(s)[tid] if frames_s else ()
        if not log or not frames_s:
            self._count(("sync", tid, bits), None)
            return
        fid = frames_s[-1][0]
        post = frames_t[-1][1] if frames_t and len(frames_t) == len(frames_s) else None
        if frames_t and len(frames_t) == len(frames_s) and frames_t[-1][0] != fid:
            post = None
        fc = self.sem.prog.funcs[fid]
        ins0 = fc.instrs[log[0][1]] if log[0][0] == fid else None
        first0 = ins0 is not None and ins0.op == FOR_NEXT and frames_s[-1][2][ins0.aux] == 0
        key = (fid, tuple(pc for _, pc in log), post, bits, failed, first0)
        if key in self._seen:
            return
        self._seen.add(key)
        self._check(fid, log, post, bits, failed, first0)

    def _count(self, key: Hashable, exact: bool | None) -> None:
        if key in self._seen:
            return
        self._seen.add(key)
        if exact is None:
            self.unchecked += 1

    def _instr_ops(
        self, fc: FuncCode, pc: int, nxt: int | None, first: bool
    ) -> tuple[list[MicroOp], bool]:
        """Micro-operations of instruction ``pc`` (taking the branch to ``nxt``; ``first``: a
        ``for`` step's first iteration) and whether the prover can read it completely."""
        ins = fc.instrs[pc]
        if ins.op == JUMP:
            return [], True
        if ins.op == FOR_NEXT:
            # read as C's loop (x = start or x += step; assume x < stop) to carry predicates
            # back; it assumes the body leaves x alone and the bounds unchanged: never exact
            loop = range_loop(ins.text)
            if loop is None:
                return [("havoc", frozenset(fc.slots[w] for w in ins.writes))], False
            x, start, stop, step = loop
            val: ast.expr = (
                start
                if first
                else ast.BinOp(ast.Name(x, ast.Load()), ast.Add(), ast.Constant(step))
            )
            more = ast.Compare(ast.Name(x, ast.Load()), [ast.Lt()], [stop])
            if nxt == ins.alt:
                return [("assume", ast.UnaryOp(ast.Not(), _subst_name(more, x, val)))], False
            return [("assign", {x: val}), ("assume", more)], False
        if ins.op in (BRANCH, ASSERT):
            cond = _condition(ins.text, ins.op)
            if cond is None or _has_impure_call(cond):
                return [], False
            if ins.op == BRANCH and nxt == ins.alt and ins.alt != ins.nxt:
                return [("assume", ast.UnaryOp(ast.Not(), cond))], True
            if ins.op == BRANCH and nxt != ins.nxt:
                return [], False
            return [("assume", cond)], True
        if ins.op == EXEC:
            k = (fc.index, pc)
            if k not in self._ops:
                self._ops[k] = statement_ops(ins.text)
            ops = self._ops[k]
            named = [fc.slots[w] for w in ins.writes]
            if ops is None:
                if named and all(n.startswith("$") for n in named) and _pure(ins.text):
                    # a temporary only the next (unchecked) instruction reads
                    return [("havoc", frozenset(named))], True
                return [("havoc", frozenset(named))], False
            local = set(fc.slots)
            readable = all(
                o[0] == "assume"
                or (o[0] == "assign" and all(n in local or n.startswith("__v") for n in o[1]))
                for o in ops
            )
            return ops, readable
        names = [fc.slots[w] for w in ins.writes]
        if ins.dest >= 0:
            names.append(fc.slots[ins.dest])
        return [("havoc", frozenset(names))], False

    def _path(
        self,
        fid: int,
        log: Sequence[tuple[int, int]],
        post: int | None,
        failed: bool,
        first0: bool,
    ) -> _Path:
        """What a transition's instructions say, whatever the abstract source state: its
        path condition and each predicate's weakest precondition (AST and IR; None where
        the prover cannot read it)."""
        fc = self.sem.prog.funcs[fid]
        ops: list[MicroOp] = []
        readable = post is not None and not failed
        for i, (f, pc) in enumerate(log):
            if f != fid:
                readable = False
                break
            nxt = log[i + 1][1] if i + 1 < len(log) else post
            ins = fc.instrs[pc]
            if nxt not in (ins.nxt, ins.alt):
                readable = False  # an exception moved control to a handler
            first = first0 if i == 0 else _initialized(fc, log[:i], ins.aux)
            o, ok = self._instr_ops(fc, pc, nxt, first)
            ops.extend(o)
            readable = readable and ok
        path: list[tuple[ast.expr, Expr]] = []
        for i, mop in enumerate(ops):
            if mop[0] == "assume":
                cond_pre = wp(mop[1], ops[:i])
                if cond_pre is None:
                    readable = False
                    continue
                try:
                    path.append((cond_pre, to_ir(cond_pre, True)))
                except Unsupported:
                    readable = False
        pres: list[tuple[str, Expr] | None] = []
        for text in self.abstraction.preds.texts(fid):
            pre = wp(self._ast(text), ops)
            try:
                pres.append(None if pre is None else (ast.unparse(pre), to_ir(pre, True)))
            except Unsupported:
                pres.append(None)
        return _Path(readable, path, pres)

    def _ast(self, text: str) -> ast.expr:
        a = self._asts.get(text)
        if a is None:
            a = self._asts[text] = parse_predicate(text)
        return a

    def _literal(self, text: str) -> Expr | None:
        if text not in self._irs:
            try:
                self._irs[text] = to_ir(self._ast(text), True)
            except Unsupported:
                self._irs[text] = None
        return self._irs[text]

    def _check(
        self,
        fid: int,
        log: Sequence[tuple[int, int]],
        post: int | None,
        bits: tuple[Any, ...],
        failed: bool,
        first0: bool,
    ) -> None:
        pk = (fid, tuple(pc for _, pc in log), post, failed, first0)
        path = self._paths.get(pk)
        if path is None:
            path = self._paths[pk] = self._path(fid, log, post, failed, first0)
        texts = self.abstraction.preds.texts(fid)
        literals: list[Expr] = []
        for text, b in zip(texts, bits, strict=False):
            lit = None if b is None else self._literal(text)
            if lit is not None:
                literals.append(lit if b else neg(lit))
        alpha = conj(literals)
        premise = conj([alpha, *(p for _, p in path.conditions)])
        exact = path.readable
        valid = self.prover.validity
        if path.conditions and valid(Op("=>", (alpha, premise))) is not Validity.VALID:
            # states of one abstract state take different paths: the branch conditions'
            # preconditions become predicates
            exact = False
            for cond, p in path.conditions:
                if valid(Op("=>", (alpha, p))) is not Validity.VALID:
                    if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):
                        cond = cond.operand
                    self._add(fid, ast.unparse(cond))
        for pre in path.pres:
            if pre is None:
                exact = False
                continue
            pre_text, pre_ir = pre
            if valid(Op("=>", (premise, pre_ir))) is Validity.VALID:
                continue
            if valid(Op("=>", (premise, neg(pre_ir)))) is Validity.VALID:
                continue
            exact = False
            self._add(fid, pre_text)
        if not path.readable:
            self.unchecked += 1
        elif exact:
            self.checked += 1
        else:
            self.checked += 1
            self.imprecise += 1

    def _add(self, fid: int, text: str) -> None:
        if text in self.abstraction.preds.texts(fid):
            return
        mine = self.new.setdefault(fid, [])
        if text not in mine and len(mine) < MAX_PREDICATES:
            mine.append(text)


def _initialized(fc: FuncCode, before: Sequence[tuple[int, int]], aux: int) -> bool:
    """Whether a loop's index slot ``aux`` was set by an earlier instruction of ``before``."""
    return aux >= 0 and any(
        fc.instrs[pc].op == EXEC and aux in fc.instrs[pc].writes for _, pc in before
    )


def new_prover() -> Prover:
    """The prover of the refinement (1 s per query: an undecided query counts as not valid)."""
    return Prover(timeout_ms=1000)


__all__ = [
    "ExactnessChecker",
    "MatchStore",
    "PredicateAbstraction",
    "PredicateSet",
    "guard_predicates",
    "new_prover",
    "parse_predicate",
    "statement_ops",
    "to_ir",
    "wp",
]
