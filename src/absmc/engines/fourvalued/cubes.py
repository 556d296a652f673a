"""Sets of valuations as minimized cubes, and their encoding as IR conditions.

The SMT enumeration of a command yields *valuations*: tuples of booleans, one per enumerated
term (concrete context terms first, then the pre-state values of predicates). A set of them is
stored as a list of *cubes* (Bonsai stores these sets in decision diagrams, §3.5; cubes play the
same role here): a cube fixes some positions to 0/1 and leaves the others free (:data:`FREE`).
:func:`minimize` merges valuations into prime cubes (Quine–McCluskey without don't-cares) and
drops redundant ones.

Encoding a cube set as a condition on an abstract state needs one *literal* per fixed position;
the caller chooses it (a :data:`Literal` function): in the may-abstraction predicates are
two-valued and a literal is an equality, in the must-abstraction a predicate may be unknown (⊥)
and a literal asks for *compatibility* — "some concrete state of this abstract state could have
that value" (``p != 1 - b``, since ⊥ is compatible with both).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from absmc.engines.fourvalued.bilattice import all_of, any_of
from absmc.ir.expr import Expr

#: a free (don't-care) position of a cube
FREE = 2

Cube = tuple[int, ...]
Literal = Callable[[int, bool], Expr]


def minimize(valuations: Iterable[Sequence[bool]]) -> list[Cube]:
    """Prime cubes covering exactly the given valuations (all of one width), with redundant
    primes removed greedily. The empty set gives ``[]``; all ``2**w`` valuations give the one
    all-free cube."""
    minterms = {tuple(int(b) for b in v) for v in valuations}
    if not minterms:
        return []
    current: set[Cube] = set(minterms)
    primes: set[Cube] = set()
    while current:
        merged: set[Cube] = set()
        used: set[Cube] = set()
        for c in current:
            for i, b in enumerate(c):
                if b == FREE:
                    continue
                partner = (*c[:i], 1 - b, *c[i + 1 :])
                if partner in current:
                    merged.add((*c[:i], FREE, *c[i + 1 :]))
                    used.add(c)
                    used.add(partner)
        primes |= current - used
        current = merged
    return _cover(sorted(primes, key=lambda c: (-c.count(FREE), c)), minterms)


def covers(cube: Cube, valuation: Sequence[int]) -> bool:
    """The valuation lies in the cube."""
    return all(b in (FREE, v) for b, v in zip(cube, valuation, strict=True))


def _cover(primes: list[Cube], minterms: set[Cube]) -> list[Cube]:
    covering: dict[Cube, list[Cube]] = {m: [p for p in primes if covers(p, m)] for m in minterms}
    chosen: list[Cube] = []
    done: set[Cube] = set()
    # essential primes first, then the largest remaining ones
    for ps in covering.values():
        if len(ps) == 1 and ps[0] not in chosen:
            chosen.append(ps[0])
    for p in chosen:
        done |= {m for m in minterms if covers(p, m)}
    for p in primes:
        if done == minterms:
            break
        if p in chosen:
            continue
        new = {m for m in minterms - done if covers(p, m)}
        if new:
            chosen.append(p)
            done |= new
    return chosen


def encode(cubes: Sequence[Cube], literal: Literal) -> Expr:
    """The disjunction over ``cubes`` of the conjunction of their literals (``false`` for no
    cube, ``true`` for an all-free one)."""
    return any_of(
        all_of(literal(i, bool(b)) for i, b in enumerate(cube) if b != FREE) for cube in cubes
    )
