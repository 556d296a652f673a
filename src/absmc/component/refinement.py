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

from absmc.component.machine import ComponentSemantics
from absmc.component.translate import ASSERT, BRANCH, EXEC, JUMP, FuncCode
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


def guard_predicates(fc: FuncCode) -> list[str]:
    """The conditions of ``fc``'s branches and assertions that call nothing but ``len`` (the
    thesis's initial predicates, Fig. 2.1 line 2), as Python source texts."""
    out: list[str] = []
    for ins in fc.instrs:
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

#: ("assign", {name: expr}) simultaneous; ("store", name, index, value); ("assume", cond);
#: ("havoc", names)
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
            if not (isinstance(st.value, ast.Tuple) and len(st.value.elts) == len(tgt.elts)):
                return None
            fresh = {f"__v{i}": v for i, v in enumerate(st.value.elts)}
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
    return None


class _Subst(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr], store: tuple[str, ast.expr, ast.expr] | None):
        self.names = names
        self.store = store

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.names:
            return copy.deepcopy(self.names[node.id])
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        st = self.store
        if st is not None and isinstance(node.value, ast.Name) and node.value.id == st[0]:
            test = ast.Compare(node.slice, [ast.Eq()], [copy.deepcopy(st[1])])
            return ast.IfExp(test, copy.deepcopy(st[2]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        return node


def wp(phi: ast.expr, ops: Sequence[MicroOp]) -> ast.expr | None:
    """The weakest precondition of ``phi`` over the micro-operations ``ops`` (executed in
    order): substitution backwards (Dijkstra; assumptions add nothing to a precondition of a
    path already taken). None when ``phi`` depends on a havocked name."""
    cur = copy.deepcopy(phi)
    for o in reversed(ops):
        kind = o[0]
        if kind == "assign":
            cur = _Subst(o[1], None).visit(cur)
        elif kind == "store":
            cur = _Subst({}, (o[1], o[2], o[3])).visit(cur)
        elif kind == "havoc" and any(
            isinstance(n, ast.Name) and n.id in o[1] for n in ast.walk(cur)
        ):
            return None
    return ast.fix_missing_locations(cur)


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


class MatchStore:
    """A keyed store that also counts the abstract states that matched a *different* concrete
    state (``merged``): no merge in a complete search means the search was exact."""

    exact = False

    def __init__(self, abstraction: PredicateAbstraction) -> None:
        self.abstraction = abstraction
        self.noun = "abstract states"
        self.first: dict[Hashable, State] = {}
        self.merged = 0

    def insert(self, state: State) -> bool:
        k = self.abstraction.key(state)
        first = self.first.get(k)
        if first is None:
            self.first[k] = state
            return True
        if first != state:
            self.merged += 1
        return False

    def __len__(self) -> int:
        return len(self.first)

    def stats(self, stopped: str | None = None) -> dict[str, Any]:
        return {
            "store": "predicates",
            "merged": self.merged,
            "predicates": self.abstraction.preds.total(),
        }


# -- the exactness check of one transition ---------------------------------------------------


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
        key = (fid, tuple(pc for _, pc in log), post, bits, failed)
        if key in self._seen:
            return
        self._seen.add(key)
        self._check(key, fid, log, post, bits, failed)

    def _count(self, key: Hashable, exact: bool | None) -> None:
        if key in self._seen:
            return
        self._seen.add(key)
        if exact is None:
            self.unchecked += 1

    def _instr_ops(self, fc: FuncCode, pc: int, nxt: int | None) -> tuple[list[MicroOp], bool]:
        """Micro-operations of instruction ``pc`` (taking the branch to ``nxt``) and whether
        the prover can read it completely."""
        ins = fc.instrs[pc]
        if ins.op == JUMP:
            return [], True
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
                if all(n.startswith("$") for n in named):
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

    def _check(
        self,
        key: Hashable,
        fid: int,
        log: Sequence[tuple[int, int]],
        post: int | None,
        bits: tuple[Any, ...],
        failed: bool,
    ) -> None:
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
            o, ok = self._instr_ops(fc, pc, nxt)
            ops.extend(o)
            readable = readable and ok
        texts = self.abstraction.preds.texts(fid)
        literals: list[Expr] = []
        for text, b in zip(texts, bits, strict=False):
            if b is None:
                continue
            try:
                f_ir = to_ir(parse_predicate(text), True)
            except (Unsupported, OptionError):
                continue
            literals.append(f_ir if b else neg(f_ir))
        alpha = conj(literals)
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
        premise = conj([alpha, *(p for _, p in path)])
        exact = readable
        if path and self.prover.validity(Op("=>", (alpha, premise))) is not Validity.VALID:
            # states of one abstract state take different paths: the branch conditions'
            # preconditions become predicates
            exact = False
            for cond, p in path:
                if self.prover.validity(Op("=>", (alpha, p))) is not Validity.VALID:
                    if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):
                        cond = cond.operand
                    self._add(fid, ast.unparse(cond))
        for text in texts:
            try:
                phi = parse_predicate(text)
            except OptionError:
                continue
            pre = wp(phi, ops)
            if pre is None:
                exact = False
                continue
            try:
                pre_ir = to_ir(pre, True)
            except Unsupported:
                exact = False
                continue
            pos = self.prover.validity(Op("=>", (premise, pre_ir)))
            if pos is Validity.VALID:
                continue
            negv = self.prover.validity(Op("=>", (premise, neg(pre_ir))))
            if negv is Validity.VALID:
                continue
            exact = False
            self._add(fid, ast.unparse(pre))
        if not readable:
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
