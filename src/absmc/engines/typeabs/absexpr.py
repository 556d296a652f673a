"""Abstract evaluation of IR expressions into guarded alternatives (paper 001, §6.2).

The abstract program of the paper replaces each concrete operation on abstracted data by the
abstract operation (``Signs.add(x, Signs.abstract(y))``) and lets ``Bandera.choose`` pick one
of several possible results. Our IR commands are deterministic, so the evaluation here
*unfolds* that program: an expression evaluates to a list of :class:`Alt` — each a list of
conditions on the abstract state (``x == POS``, ``y < 0`` for a concrete ``y``, ...) under which
the expression has one value — and an operation with several possible results yields one
alternative per result, marked ``choice``. The abstract System generator turns the
alternatives of a command into guarded commands.

Values in alternatives are IR expressions over the *abstract* state: token indices (constants,
or an abstracted variable of the same domain, kept symbolically when nothing needs its token),
and concrete expressions over concrete variables, kept exactly as written (so concrete parts
keep their concrete semantics, short-circuit evaluation and model errors included).

Coercions (§6.2): a constant is abstracted when the model is generated; a concrete operand
becomes ``alpha(e)`` (``Signs.abstract(y)``); any abstract value coerced to a one-token domain
(``point``) becomes its only token.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from absmc.codegen.plan import may_raise
from absmc.engines.typeabs.domains import Domain
from absmc.engines.typeabs.infer import Typing, join
from absmc.engines.typeabs.operators import GenerationTimeout, OperatorLibrary
from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import (
    COMPARE_OPS,
    FALSE,
    TRUE,
    Const,
    Expr,
    Op,
    Var,
    conj,
    const,
    disj,
    free_vars,
    neg,
    op,
)
from absmc.ir.sorts import RangeSort
from absmc.logic.definedness import definedness


@dataclass(frozen=True)
class Alt:
    """One alternative of an abstract evaluation.

    ``conds``: the conditions (IR over the abstract state, in evaluation order) under which it
    applies; ``value``: the value (``None`` for an error); ``choice``: a multi-valued abstract
    operation was resolved on the way (the paper's ``Bandera.choose``); ``error``: evaluation
    ends in a (possible) model error, described; ``source``: for a coerced concrete value, the
    concrete expression whose abstraction ``value`` is.
    """

    conds: tuple[Expr, ...] = ()
    value: Expr | None = TRUE
    choice: bool = False
    error: str | None = None
    source: Expr | None = None

    def extend(self, *conds: Expr) -> Alt:
        """This alternative with more conditions (``true`` and duplicates skipped; a constant
        condition is evaluated, and a false one makes the alternative infeasible)."""
        new = list(self.conds)
        for c in conds:
            if not free_vars(c):
                with contextlib.suppress(EvalError):
                    c = TRUE if evaluate(c, {}) else FALSE
            if c != TRUE and c not in new:
                new.append(c)
        return replace(self, conds=tuple(new))

    @property
    def feasible(self) -> bool:
        """False when a condition is the constant ``false``."""
        return FALSE not in self.conds

    def to(self, value: Expr, choice: bool | None = None, source: Expr | None = None) -> Alt:
        """This alternative with another value (and, optionally, choice flag)."""
        return Alt(
            self.conds,
            value,
            self.choice if choice is None else choice,
            None,
            source,
        )

    def fail(self, message: str, choice: bool) -> Alt:
        """This alternative ending in a model error."""
        return Alt(self.conds, None, choice, message, None)

    @property
    def guard(self) -> Expr:
        """The conjunction of the conditions."""
        return conj(self.conds)


def _infeasible(conds: tuple[Expr, ...]) -> bool:
    return FALSE in conds


def merge_equal(alts: list[Alt]) -> list[Alt]:
    """``alts`` without repeats: alternatives with the same conditions, value, error and source
    are one (``choice`` when any of them is). Different intermediate tokens of an abstract
    operation often end in the same truth value under the same conditions; keeping one per
    outcome stops the alternatives of repeated abstract subexpressions from multiplying."""
    if len(alts) < 2:
        return alts
    seen: dict[tuple[object, ...], int] = {}
    out: list[Alt] = []
    for a in alts:
        key = (a.conds, a.value, a.error, a.source)
        k = seen.get(key)
        if k is None:
            seen[key] = len(out)
            out.append(a)
        elif a.choice and not out[k].choice:
            out[k] = replace(out[k], choice=True)
    return out


class AbstractEvaluator:
    """Evaluates expressions of a concrete System abstractly under a :class:`Typing`, with
    abstract operators from an :class:`OperatorLibrary` (see the module docstring).

    ``sorts`` maps each abstracted variable to its sort in the abstract System (token indices
    ``0..k-1``). Raises ``ModelError`` (via the library) for an unsafe user-written operator,
    and :class:`GenerationTimeout` once ``deadline`` (a ``time.monotonic()`` instant) passes.
    """

    def __init__(
        self,
        typing: Typing,
        ops: OperatorLibrary,
        sorts: Mapping[str, RangeSort],
        deadline: float | None = None,
    ) -> None:
        self.deadline = deadline
        self.typing = typing
        self.ops = ops
        self.sorts = sorts
        self.abstract = frozenset(typing.domains)
        self._mentions: dict[Expr, bool] = {}

    # -- helpers -----------------------------------------------------------------------
    def mentions_abstract(self, e: Expr) -> bool:
        """True when ``e`` reads an abstracted variable."""
        hit = self._mentions.get(e)
        if hit is None:
            hit = bool(free_vars(e) & self.abstract)
            self._mentions[e] = hit
        return hit

    def ref(self, name: str) -> Var:
        """The abstract System's reference to abstracted variable ``name``."""
        return Var(name, self.sorts[name])

    def type_of(self, e: Expr) -> Domain | None:
        """The abstract type of an integer expression (``None``: concrete)."""
        return self.typing.expr_type(e)

    def tokens(self, alt: Alt, d: Domain) -> list[Alt]:
        """Split an abstract value of domain ``d`` into alternatives whose value is a token
        constant (adding ``x == t`` or ``t?(e)`` conditions)."""
        v = alt.value
        if alt.error is not None or isinstance(v, Const):
            return [alt]
        if d.is_point:
            return [alt.to(const(0), source=alt.source)]
        if alt.source is not None:
            s = alt.source
            for t in range(d.size):
                if d.pred(t, s) in alt.conds:
                    return [alt.to(const(t), source=s)]
            out = []
            for t in range(d.size):
                a = alt.extend(d.pred(t, s))
                out.append(a.to(const(t), source=s))
            return out
        assert isinstance(v, Var), f"cannot split {v!r}"
        for c in alt.conds:
            if (
                isinstance(c, Op)
                and c.op == "=="
                and c.args[0] == v
                and isinstance(c.args[1], Const)
            ):
                return [alt.to(c.args[1])]
        return [alt.extend(op("==", v, const(t))).to(const(t)) for t in range(d.size)]

    def coerce(self, alt: Alt, d: Domain) -> list[Alt]:
        """A concrete value coerced into domain ``d`` (``abstract(e)``): one alternative, or
        two for a one-token domain and an ``e`` that may divide by zero (the error, and token
        0 where ``e`` is defined)."""
        assert alt.value is not None
        e = alt.value
        if not free_vars(e):
            try:
                value = evaluate(e, {})
            except EvalError as err:
                return [alt.fail(str(err), alt.choice)]
            return [alt.to(const(d.alpha(value)), source=const(value))]
        if d.is_point:
            # the one token drops the value, not the evaluation: dividing by zero in ``e``
            # stays a model error (the abstract System keeps the concrete condition)
            ok = definedness(e)
            if ok == TRUE:
                return [alt.to(const(0))]
            return [
                alt.extend(neg(ok)).fail("division by zero", alt.choice),
                alt.extend(ok).to(const(0)),
            ]
        return [alt.to(d.alpha_expr(e), source=e)]

    # -- integer values ------------------------------------------------------------------
    def value(self, e: Expr, ctx: Alt, want: Domain | None) -> list[Alt]:
        """The alternatives of integer expression ``e`` evaluated in context ``ctx``: concrete
        values when ``want`` is ``None``, else tokens of ``want`` (coercing as needed). A
        boolean ``e`` (a comparison assigned or selected as a value) evaluates to its truth
        alternatives: an abstract comparison that cannot be decided yields both ``true`` and
        ``false``, flagged ``choice`` (the paper's ``Bandera.choose``)."""
        if e.is_bool:
            return self.truth(e, ctx)
        if not self.mentions_abstract(e):
            a = ctx.to(e)
            return [a] if want is None else self.coerce(a, want)
        t = self.type_of(e)
        if t is None:
            alts = self._concrete(e, ctx)
            if want is None:
                return alts
            return [b for a in alts for b in ([a] if a.error else self.coerce(a, want))]
        assert want is not None, f"abstract value {e!r} where a concrete one is needed"
        if want != t:
            # a coercion into a coarser (one-token) domain: only possible errors matter
            if not may_raise(e):
                return [ctx.to(const(0))]
            alts = self._abstract(e, ctx, t)
            return merge_equal([a if a.error else a.to(const(0)) for a in alts])
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise GenerationTimeout("time limit reached while generating the abstract System")
        return merge_equal(self._abstract(e, ctx, t))

    def _concrete(self, e: Expr, ctx: Alt) -> list[Alt]:
        """A concrete-typed integer expression that reads abstract variables in conditions."""
        assert isinstance(e, Op)
        if e.op == "ite":
            out: list[Alt] = []
            for c in self.truth(e.args[0], ctx):
                out.extend(self._branch(c, e.args[1], e.args[2], None))
            return out
        alts = [ctx.to(TRUE)]
        values: list[list[Expr]] = [[]]
        for arg in e.args:
            nalts: list[Alt] = []
            nvalues: list[list[Expr]] = []
            for a, vs in zip(alts, values, strict=True):
                if a.error:
                    nalts.append(a)
                    nvalues.append(vs)
                    continue
                for b in self.value(arg, a, None):
                    nalts.append(b)
                    nvalues.append([*vs, b.value] if b.value is not None else vs)
            alts, values = nalts, nvalues
        return [
            a if a.error else a.to(Op(e.op, tuple(vs), e.span))
            for a, vs in zip(alts, values, strict=True)
        ]

    def _branch(self, c: Alt, a: Expr, b: Expr, want: Domain | None) -> list[Alt]:
        if c.error:
            return [c]
        if c.value == TRUE:
            return self.value(a, c, want)
        if c.value == FALSE:
            return self.value(b, c, want)
        assert c.value is not None
        return self.value(a, c.extend(c.value), want) + self.value(b, c.extend(neg(c.value)), want)

    def _abstract(self, e: Expr, ctx: Alt, d: Domain) -> list[Alt]:
        """An expression of abstract type ``d``, evaluated to tokens of ``d``."""
        if isinstance(e, Var):
            return [ctx.to(self.ref(e.name))]
        assert isinstance(e, Op)
        if e.op == "ite":
            out: list[Alt] = []
            for c in self.truth(e.args[0], ctx):
                out.extend(self._branch(c, e.args[1], e.args[2], d))
            return out
        table = self.ops.table(d, e.op)
        if e.op in ("neg", "~"):
            res: list[Alt] = []
            for a in self.value(e.args[0], ctx, d):
                for at in self.tokens(a, d):
                    if at.error:  # -(a / b): the operand's possible division by zero
                        res.append(at)
                        continue
                    res.extend(self._results(at, table.result(_tok(at)), False, None))
            return res
        out = []
        for a in self.value(e.args[0], ctx, d):
            for at in self.tokens(a, d):
                if at.error:
                    out.append(at)
                    continue
                for b in self.value(e.args[1], at, d):
                    for bt in self.tokens(b, d):
                        if bt.error:
                            out.append(bt)
                            continue
                        tb = _tok(bt)
                        zero = tb in table.zero_divisors
                        out.extend(self._results(bt, table.result(_tok(at), tb), zero, bt.source))
        return out

    def _results(
        self, ctx: Alt, results: frozenset[int], zero: bool, divisor: Expr | None
    ) -> list[Alt]:
        """Alternatives for the possible ``results`` of an abstract operation (and a division
        by zero when the divisor token ``zero`` may be 0; exact when the divisor is a coerced
        concrete expression)."""
        if zero and divisor is not None:
            nz = ctx.extend(op("!=", divisor, const(0)))
            err = ctx.extend(op("==", divisor, const(0))).fail("division by zero", ctx.choice)
            return [err, *self._results(nz, results, False, None)]
        multi = len(results) + (1 if zero else 0) > 1
        choice = ctx.choice or multi
        out = [ctx.to(const(r), choice) for r in sorted(results)]
        if zero:
            out.append(ctx.fail("possible division by zero", choice))
        return out

    # -- truth values --------------------------------------------------------------------
    def truth(self, e: Expr, ctx: Alt) -> list[Alt]:
        """The alternatives of boolean expression ``e`` in context ``ctx``: values are
        ``true``/``false`` or concrete boolean expressions (equal alternatives merged)."""
        if not self.mentions_abstract(e):
            return [ctx.to(e)]
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise GenerationTimeout("time limit reached while generating the abstract System")
        return merge_equal(self._truth(e, ctx))

    def _truth(self, e: Expr, ctx: Alt) -> list[Alt]:
        assert isinstance(e, Op)
        o = e.op
        if o == "!":
            return [a if a.error else a.to(neg(_v(a))) for a in self.truth(e.args[0], ctx)]
        if o == "=>":
            return self.truth(Op("||", (neg(e.args[0]), e.args[1]), e.span), ctx)
        if o in ("&&", "||"):
            return self._junction(e, ctx)
        if o == "ite":
            out: list[Alt] = []
            for c in self.truth(e.args[0], ctx):
                if c.error:
                    out.append(c)
                elif c.value == TRUE:
                    out.extend(self.truth(e.args[1], c))
                elif c.value == FALSE:
                    out.extend(self.truth(e.args[2], c))
                else:
                    v = _v(c)
                    out.extend(self.truth(e.args[1], c.extend(v)))
                    out.extend(self.truth(e.args[2], c.extend(neg(v))))
            return out
        assert o in COMPARE_OPS, f"unexpected boolean operator {o}"
        a, b = e.args
        if a.is_bool:  # == / != between truth values
            out = []
            for x in self.truth(a, ctx):
                if x.error:
                    out.append(x)
                    continue
                for y in self.truth(b, x):
                    out.append(y if y.error else y.to(_fold(Op(o, (_v(x), _v(y)), e.span))))
            return out
        d = join(self.type_of(a), self.type_of(b))
        if d is None:
            # concrete comparison of concrete-typed values that read abstract conditions
            out = []
            for x in self.value(a, ctx, None):
                if x.error:
                    out.append(x)
                    continue
                for y in self.value(b, x, None):
                    out.append(y if y.error else y.to(Op(o, (_v(x), _v(y)), e.span)))
            return out
        table = self.ops.table(d, o)
        out = []
        for x in self.value(a, ctx, d):
            for xt in self.tokens(x, d):
                if xt.error:
                    out.append(xt)
                    continue
                for y in self.value(b, xt, d):
                    for yt in self.tokens(y, d):
                        if yt.error:
                            out.append(yt)
                            continue
                        res = table.result(_tok(xt), _tok(yt))
                        choice = yt.choice or len(res) > 1
                        out.extend(yt.to(TRUE if r else FALSE, choice) for r in sorted(res))
        return out

    def _junction(self, e: Op, ctx: Alt) -> list[Alt]:
        stop = FALSE if e.op == "&&" else TRUE  # the value that short-circuits
        go = TRUE if e.op == "&&" else FALSE
        alts = [ctx.to(go)]
        for arg in e.args:
            new: list[Alt] = []
            for a in alts:
                if a.error or a.value == stop:
                    new.append(a)
                elif a.value == go:
                    new.extend(self.truth(arg, a))
                elif not self.mentions_abstract(arg):
                    combine = conj if e.op == "&&" else disj
                    new.append(a.to(combine([_v(a), arg])))
                else:
                    v = _v(a)
                    cont = v if e.op == "&&" else neg(v)
                    new.append(a.extend(neg(cont)).to(stop))
                    new.extend(self.truth(arg, a.extend(cont)))
            alts = merge_equal(new)
        return alts

    # -- top-level helpers ---------------------------------------------------------------
    def _feasible(self, e: Expr) -> list[Alt]:
        return [a for a in self.truth(e, Alt()) if a.feasible]

    def must(self, e: Expr) -> Expr:
        """An abstract-state predicate that implies ``e`` for every concrete state it
        abstracts (the under-approximation of a proposition, §3.2)."""
        parts: list[Expr] = []
        for a in self._feasible(e):
            if a.error or a.value == FALSE:
                parts.append(neg(a.guard))
            elif a.value != TRUE:
                parts.append(_v(a) if not a.conds else Op("=>", (a.guard, _v(a))))
        return conj(parts)

    def may(self, e: Expr) -> Expr:
        """An abstract-state predicate implied by ``e`` (``e`` may hold in a concrete state the
        abstract state abstracts; possible evaluation errors count as holding)."""
        parts: list[Expr] = []
        for a in self._feasible(e):
            if a.error or a.value == TRUE:
                parts.append(a.guard)
            elif a.value != FALSE:
                parts.append(conj([*a.conds, _v(a)]))
        return disj(parts)

    def surely_false(self, e: Expr) -> Expr:
        """The abstract states in which ``e`` evaluates to false through deterministic abstract
        operations only (no ``choose``): every concrete state they abstract falsifies ``e``
        (the choose-free search's view of a failing assertion, §7)."""
        parts: list[Expr] = []
        for a in self._feasible(e):
            if a.error or a.choice or a.value == TRUE:
                continue
            parts.append(a.guard if a.value == FALSE else conj([*a.conds, neg(_v(a))]))
        return disj(parts)

    def may_be_false(self, e: Expr) -> Expr:
        """The abstract states in which ``e`` may evaluate to false *without* an error (the
        condition a concrete deadlock needs of every guard)."""
        parts: list[Expr] = []
        for a in self._feasible(e):
            if a.error or a.value == TRUE:
                continue
            parts.append(a.guard if a.value == FALSE else conj([*a.conds, neg(_v(a))]))
        return disj(parts)


def _v(a: Alt) -> Expr:
    assert a.value is not None
    return a.value


def _tok(a: Alt) -> int:
    assert isinstance(a.value, Const), a
    return a.value.value


def _fold(e: Op) -> Expr:
    a, b = e.args
    if isinstance(a, Const) and isinstance(b, Const):
        same = a.value == b.value
        return TRUE if same == (e.op == "==") else FALSE
    return e


__all__ = ["AbstractEvaluator", "Alt", "GenerationTimeout", "merge_equal"]
