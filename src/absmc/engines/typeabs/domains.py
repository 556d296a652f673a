"""Abstract domains of integers: token sets with an abstraction function (paper 001, §3.2, §4.2).

A :class:`Domain` is a finite set of *tokens* and, for each token ``t``, a predicate ``t?(n)``
over one integer ``n`` (an IR expression over the variable :data:`N`). The predicates partition
the integers: ``alpha(n)`` is the one token whose predicate holds. The abstract domain of the
paper is the powerset of the tokens; abstract values in a model are single tokens, and sets of
possible results become nondeterministic choices (§6.1).

The library (§4.2):

============================  =====================================  ========================
spec                          tokens                                 ``alpha(n)``
============================  =====================================  ========================
``signs``                     ``NEG ZERO POS``                       sign of ``n``
``range(l,u)``                ``BELOW<l> <l> ... <u> ABOVE<u>``      ``n`` itself inside
                                                                     ``l..u``, else below/above
``set(v1,...,vk)``            ``<v1> ... <vk> OTHER``                ``n`` if listed, else other
``modulo(k)``                 ``R0 ... R<k-1>`` (``EVEN ODD`` for 2) residue of ``n`` mod ``k``
``point``                     ``UNKNOWN``                            always ``UNKNOWN``
============================  =====================================  ========================

User domains come from BASL files (:mod:`absmc.engines.typeabs.basl`). A domain's
``operators`` holds operator tables written by the user (checked for safety before use); all
other abstract operators are generated (:mod:`absmc.engines.typeabs.operators`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from absmc.ir.evaluate import EvalError, evaluate
from absmc.ir.expr import TRUE, Const, Expr, Op, Var, conj, const, op, substitute
from absmc.ir.sorts import INT
from absmc.ir.span import SourceSpan
from absmc.lang.domains import DomainError as DomainError
from absmc.lang.domains import DomainSpec as DomainSpec

#: the integer variable the token predicates talk about
N: Final = Var("n", INT)

#: the largest number of tokens a library domain may have (a range or set wider than this is
#: almost certainly a mistake: the abstract state space grows with it)
MAX_TOKENS: Final = 64


@dataclass(frozen=True)
class UserOperator:
    """An abstract operator written in a BASL file (paper 001, Fig. 1).

    ``cases`` are ``(patterns, results, span)`` in source order; a pattern is a token index or
    ``None`` for ``_``; the first case whose patterns match an argument tuple gives its result
    set (token indices, or ``0``/``1`` for false/true when ``op`` is a comparison).
    """

    op: str
    name: str
    cases: tuple[tuple[tuple[int | None, ...], frozenset[int], SourceSpan | None], ...]
    span: SourceSpan | None = field(default=None, compare=False)

    def lookup(self, args: Sequence[int]) -> tuple[frozenset[int], SourceSpan | None] | None:
        """The result set of the first case matching ``args`` and its span, or ``None``."""
        for pats, res, span in self.cases:
            if all(p is None or p == a for p, a in zip(pats, args, strict=True)):
                return res, span
        return None


@dataclass(frozen=True)
class Domain:
    """A token set with one predicate per token (see the module docstring).

    ``name`` is what users write (``signs``, ``range(0,1)``, a BASL abstraction's name);
    ``predicates[i]`` is ``tokens[i]?(n)`` over :data:`N`. ``operators`` are user-written
    operator tables (BASL). Two domains are equal when name, tokens, predicates and operators
    are; that equality is the abstract-type equality of type inference.
    """

    name: str
    tokens: tuple[str, ...]
    predicates: tuple[Expr, ...]
    operators: tuple[UserOperator, ...] = ()
    description: str = ""
    span: SourceSpan | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.tokens or len(self.tokens) != len(self.predicates):
            raise ValueError("a domain needs one predicate per token")

    def __str__(self) -> str:
        return self.name

    @property
    def size(self) -> int:
        """Number of tokens."""
        return len(self.tokens)

    @property
    def is_point(self) -> bool:
        """True for a one-token domain (every value is abstracted to the same token)."""
        return len(self.tokens) == 1

    def pred(self, token: int, e: Expr) -> Expr:
        """``token?(e)``: the token's predicate applied to expression ``e``."""
        return substitute(self.predicates[token], {N.name: e})

    def alpha(self, value: int) -> int:
        """The token index of the concrete integer ``value``; raises ``ValueError`` when no
        predicate holds (a BASL abstraction function that does not cover ``value``)."""
        return self._alpha(value)

    @cached_property
    def _alpha_cache(self) -> dict[int, int]:
        return {}

    def _alpha(self, value: int) -> int:
        hit = self._alpha_cache.get(value)
        if hit is not None:
            return hit
        for i, p in enumerate(self.predicates):
            try:
                if evaluate(p, {N.name: value}):
                    self._alpha_cache[value] = i
                    return i
            except EvalError:
                continue
        raise ValueError(f"the abstraction function of {self.name} has no token for {value}")

    def alpha_expr(self, e: Expr) -> Expr:
        """An IR expression computing ``alpha(e)`` (a chain of ``ite`` over the predicates;
        the token index as a constant when ``e`` is one)."""
        if isinstance(e, Const):
            return const(self.alpha(e.value))
        if self.is_point:
            return const(0)
        out: Expr = const(self.size - 1)
        for i in range(self.size - 2, -1, -1):
            out = Op("ite", (self.pred(i, e), const(i), out))
        return out

    def may_be(self, token: int, value: int) -> bool:
        """True when the concrete ``value`` is abstracted to ``token``."""
        try:
            return bool(evaluate(self.predicates[token], {N.name: value}))
        except EvalError:
            return False

    def user_operator(self, o: str) -> UserOperator | None:
        """The user-written table for operator ``o``, if any."""
        return next((u for u in self.operators if u.op == o), None)

    def describe(self) -> str:
        """``NAME: {T1, T2, ...}`` with one line per token predicate."""
        from absmc.ir.printer import format_expr

        lines = [f"{self.name}: {{{', '.join(self.tokens)}}}"]
        for t, p in zip(self.tokens, self.predicates, strict=True):
            lines.append(f"  {t}: {format_expr(p)}")
        return "\n".join(lines)


# -- the library -----------------------------------------------------------------------------


def signs() -> Domain:
    """The signs abstraction ``{NEG, ZERO, POS}`` (paper 001, §3.2 and Fig. 1)."""
    return Domain(
        "signs",
        ("NEG", "ZERO", "POS"),
        (op("<", N, const(0)), op("==", N, const(0)), op(">", N, const(0))),
        description="sign of the value",
    )


def range_domain(lo: int, hi: int) -> Domain:
    """``range(lo,hi)``: tokens ``BELOW<lo>``, ``lo`` ... ``hi``, ``ABOVE<hi>`` (§4.2). Raises
    ``DomainError`` when ``lo > hi`` or the range has more than :data:`MAX_TOKENS` tokens."""
    if lo > hi:
        raise DomainError(f"range({lo},{hi}): the lower bound is above the upper bound")
    if hi - lo + 3 > MAX_TOKENS:
        raise DomainError(f"range({lo},{hi}) would have more than {MAX_TOKENS} tokens")
    tokens = [f"BELOW{lo}"] + [str(v) for v in range(lo, hi + 1)] + [f"ABOVE{hi}"]
    preds = (
        [op("<", N, const(lo))]
        + [op("==", N, const(v)) for v in range(lo, hi + 1)]
        + [op(">", N, const(hi))]
    )
    return Domain(
        f"range({lo},{hi})",
        tuple(tokens),
        tuple(preds),
        description=f"exact inside {lo}..{hi}, below and above collapsed",
    )


def set_domain(values: Sequence[int]) -> Domain:
    """``set(v1,...)``: one token per value and ``OTHER`` (§4.2). Raises ``DomainError`` for no
    values, duplicates or more than :data:`MAX_TOKENS` tokens."""
    vals = list(values)
    if not vals:
        raise DomainError("set(): give at least one value")
    if len(set(vals)) != len(vals):
        raise DomainError(f"set({','.join(map(str, vals))}): a value is listed twice")
    if len(vals) + 1 > MAX_TOKENS:
        raise DomainError(f"set(...) would have more than {MAX_TOKENS} tokens")
    tokens = [str(v) for v in vals] + ["OTHER"]
    preds = [op("==", N, const(v)) for v in vals] + [conj([op("!=", N, const(v)) for v in vals])]
    return Domain(
        f"set({','.join(map(str, vals))})",
        tuple(tokens),
        tuple(preds),
        description="the listed values exactly, every other value as OTHER",
    )


def residue(e: Expr, k: int) -> Expr:
    """``((e % k) + k) % k``: the residue of ``e`` modulo ``k`` in ``0..k-1`` (the logic layer
    turns this idiom into the solver's native modulus)."""
    return op("%", op("+", op("%", e, const(k)), const(k)), const(k))


def modulo(k: int) -> Domain:
    """``modulo(k)``: integers with equal residue mod ``k`` merged (§4.2); ``EVEN``/``ODD`` for
    ``k == 2``, ``R0`` ... ``R<k-1>`` otherwise. Raises ``DomainError`` unless
    ``2 <= k <= MAX_TOKENS``."""
    if not 2 <= k <= MAX_TOKENS:
        raise DomainError(f"modulo({k}): k must be between 2 and {MAX_TOKENS}")
    tokens = ("EVEN", "ODD") if k == 2 else tuple(f"R{r}" for r in range(k))
    preds = tuple(op("==", residue(N, k), const(r)) for r in range(k))
    return Domain(f"modulo({k})", tokens, preds, description=f"residue modulo {k}")


def point() -> Domain:
    """The point abstraction ``{UNKNOWN}``: all information about the value is dropped (§4.2)."""
    return Domain("point", ("UNKNOWN",), (TRUE,), description="no information")


#: the library as shown by ``absmc domains``: (spec syntax, an example)
LIBRARY: Final = (
    ("signs", "signs"),
    ("range(l,u)", "range(0,1)"),
    ("set(v1,...,vk)", "set(3,5)"),
    ("modulo(k)", "modulo(2)"),
    ("point", "point"),
)


def resolve_domain(spec: DomainSpec, user: Mapping[str, Domain] | None = None) -> Domain:
    """The domain ``spec`` names: a user (BASL) domain by its exact text, else a library
    domain (``signs``, ``range(l,u)``, ``set(v,...)``, ``modulo(k)``, ``point``;
    case-insensitive). Raises ``DomainError`` for unknown names and bad parameters."""
    user = user or {}
    if spec.text in user:
        return user[spec.text]
    name, params = spec.name, spec.params
    if name is None:
        raise DomainError(_unknown(spec.text, user))
    if name in ("signs", "point") and not params:
        return signs() if name == "signs" else point()
    if name == "range" and params is not None and len(params) == 2:
        return range_domain(params[0], params[1])
    if name == "set" and params:
        return set_domain(params)
    if name == "modulo" and params is not None and len(params) == 1:
        return modulo(params[0])
    forms = {"signs": "signs", "point": "point", "range": "range(l,u)"}
    forms |= {"set": "set(v1,...,vk)", "modulo": "modulo(k)"}
    if name in forms:
        raise DomainError(f"'{spec.text}': write {forms[name]}")
    raise DomainError(_unknown(spec.text, user))


def _unknown(spec: str, user: Mapping[str, Domain]) -> str:
    names = [form for form, _ in LIBRARY] + sorted(user)
    return f"unknown abstraction '{spec}' (known: {', '.join(names)})"
