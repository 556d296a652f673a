"""User-defined domains from BASL files (paper 001, §4 and Fig. 1).

The syntax is parsed by :mod:`absmc.lang.basl` (files are read by the CLI); this module turns
an abstraction into a :class:`~absmc.engines.typeabs.domains.Domain` and checks it with the
prover:

* the abstraction function's clauses are tried in order, so token ``t``'s predicate is the
  disjunction of its clauses' conditions, each conjoined with the negations of the earlier
  conditions it is not already disjoint from (the prover decides which);
* the clauses must cover every integer (else ``ModelError`` with a value that no clause takes);
* every token must be produced by some clause;
* written operators are checked for safety by :func:`~absmc.engines.typeabs.operators.
  check_user_operator` when first used (or all at once by :func:`unsafe_entries`).
"""

from __future__ import annotations

from collections.abc import Iterable

from absmc.engines.typeabs.domains import Domain, UserOperator
from absmc.engines.typeabs.operators import OperatorLibrary, SafetyIssue, check_user_operator
from absmc.ir.expr import FALSE, Expr, Op, conj, disj, neg
from absmc.ir.span import ModelError
from absmc.lang.basl import BaslAbstraction
from absmc.logic import Prover, Validity


def domain_of(spec: BaslAbstraction, prover: Prover) -> Domain:
    """The domain a BASL abstraction defines. Raises ``ModelError`` (at the abstraction
    function or the token) when the clauses miss some integer or some token has no clause."""
    parts: list[list[Expr]] = [[] for _ in spec.tokens]
    earlier: list[Expr] = []
    for clause in spec.clauses:
        cond = clause.condition
        guards = [cond]
        for e in earlier:
            if prover.validity(Op("=>", (cond, neg(e)))) is not Validity.VALID:
                guards.append(neg(e))
        parts[clause.token].append(conj(guards))
        earlier.append(cond)
    for i, p in enumerate(parts):
        if not p:
            raise ModelError(
                f"token {spec.tokens[i]} of {spec.name} is never produced by abstract()",
                spec.function_span,
            )
    cover = disj(c.condition for c in spec.clauses)
    v = prover.validity(cover)
    if v is not Validity.VALID:
        m = prover.model(neg(cover)) if v is Validity.INVALID else None
        which = f"n = {m.get('n', 0)}" if m is not None else "some integers (undecided)"
        raise ModelError(
            f"abstract() of {spec.name} gives no token for {which}: the abstraction must map "
            "every integer to a token",
            spec.function_span,
        )
    ops = tuple(
        UserOperator(
            o.op,
            o.name,
            tuple((c.patterns, c.results, c.span) for c in o.cases),
            o.span,
        )
        for o in spec.operators
    )
    return Domain(
        spec.name,
        spec.tokens,
        tuple(disj(p) if p else FALSE for p in parts),
        ops,
        description=f"defined in {spec.span.file}" if spec.span else "user-defined",
        span=spec.span,
    )


def basl_domains(specs: Iterable[BaslAbstraction], library: OperatorLibrary) -> dict[str, Domain]:
    """The domains of parsed BASL abstractions (name -> domain; later ones win on equal names),
    each abstraction function checked with ``library``'s prover. Raises ``ModelError``."""
    out: dict[str, Domain] = {}
    for spec in specs:
        out[spec.name] = domain_of(spec, library.prover)
    return out


def unsafe_entries(domain: Domain, library: OperatorLibrary) -> list[SafetyIssue]:
    """Every unsafe entry of the operators written for ``domain`` (empty when all are safe).
    Raises ``ModelError`` when an operator misses an argument combination."""
    issues: list[SafetyIssue] = []
    for user in domain.operators:
        _, found = check_user_operator(domain, user, library.prover)
        issues.extend(found)
    return issues
