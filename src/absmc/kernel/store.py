"""State stores for explicit search, behind one small interface.

A store decides whether a state was *seen before*: ``insert(state)`` returns ``True`` when the
state is new (and remembers it). Implementations:

* :class:`ExactStore` — a set of states (exhaustive search);
* :class:`BitStateStore` — SPIN's bitstate/supertrace hashing: a bit array of ``2**log2_bits``
  bits and ``k`` hash functions (double hashing of Python's tuple hash); a state is considered
  seen when all its ``k`` bits are set, so hash collisions may *omit* states (never add any);
* :class:`HashCompactStore` — SPIN's hash-compact mode (``-DHC``): a set of 64-bit hashes of
  the states; two states with the same hash are taken as one, so (rarely) states are omitted;
* :class:`KeyedStore` — matching on an abstraction of the state (keyed by a function of it):
  abstract matching, as ``--method under`` uses it (paper 000, Fig. 2, line 6).

Only the exact store supports a proof; the others never claim one. ``noun`` names what a store
counts in limit messages ("states", "abstract states").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any, Protocol

State = tuple[int, ...]

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


class Store(Protocol):
    """What a search needs of a store. ``exact``: two states match only when equal (a complete
    search proves); ``noun``: what the store counts, for messages."""

    exact: bool
    noun: str

    def insert(self, state: State) -> bool:
        """Remember ``state``; ``True`` when it was not seen before."""
        ...

    def __len__(self) -> int:
        """Number of states inserted as new."""
        ...

    def stats(self) -> dict[str, Any]:
        """Store-specific statistics for the result (e.g. hash factor)."""
        ...


class ExactStore:
    """Exhaustive store: a Python set of state tuples. ``states`` is the set itself (searches
    use it directly in their hot loop)."""

    exact = True
    noun = "states"

    def __init__(self) -> None:
        self.states: set[State] = set()

    def insert(self, state: State) -> bool:
        n = len(self.states)
        self.states.add(state)
        return len(self.states) != n

    def __len__(self) -> int:
        return len(self.states)

    def stats(self) -> dict[str, Any]:
        return {"store": "exact"}


class KeyedStore:
    """Stores ``key(state)`` instead of the state: two states match when their keys are equal
    (abstract matching when ``key`` is an abstraction function). ``keys`` is the set of keys."""

    exact = False

    def __init__(self, key: Callable[[State], Hashable], name: str = "abstract") -> None:
        self.key = key
        self.name = name
        self.noun = f"{name} states"
        self.keys: set[Hashable] = set()

    def insert(self, state: State) -> bool:
        k = self.key(state)
        if k in self.keys:
            return False
        self.keys.add(k)
        return True

    def __len__(self) -> int:
        return len(self.keys)

    def stats(self) -> dict[str, Any]:
        return {"store": self.name}


class HashCompactStore:
    """Hash-compact storage, as SPIN's ``-DHC``: each state is kept as a 64-bit hash (Python's
    tuple hash), 8 bytes of payload instead of the whole tuple. States whose hashes collide
    are taken as one, so a search may omit states (never add any): not a proof. With ``n``
    states the expected number of collisions is about ``n² / 2⁶⁵``."""

    exact = False
    noun = "states"

    def __init__(self) -> None:
        self.hashes: set[int] = set()

    def insert(self, state: State) -> bool:
        n = len(self.hashes)
        self.hashes.add(hash(state))
        return len(self.hashes) != n

    def __len__(self) -> int:
        return len(self.hashes)

    def expected_collisions(self) -> float:
        """The expected number of colliding pairs among the stored states (birthday bound)."""
        n = len(self.hashes)
        return n * (n - 1) / 2 / 2.0**64

    def stats(self) -> dict[str, Any]:
        return {
            "store": "hash-compact",
            "expected_collisions": float(f"{self.expected_collisions():.3g}"),
        }


class BitStateStore:
    """Bitstate (supertrace) hashing, as SPIN's ``-DBITSTATE``.

    ``log2_bits`` sets the array size (``2**log2_bits`` bits, ``2**(log2_bits-3)`` bytes);
    ``k`` is the number of hash functions (SPIN's ``-k``, default 3). Raises ``ValueError`` for
    ``log2_bits`` outside 3..40 or ``k`` outside 1..32.
    """

    exact = False
    noun = "states"

    def __init__(self, log2_bits: int = 27, k: int = 3) -> None:
        if not 3 <= log2_bits <= 40:
            raise ValueError("bitstate size must be between 2^3 and 2^40 bits")
        if not 1 <= k <= 32:
            raise ValueError("the number of hash functions must be between 1 and 32")
        self.log2_bits = log2_bits
        self.m = 1 << log2_bits
        self.k = k
        self.bits = bytearray(self.m >> 3)
        self.count = 0

    def insert(self, state: State) -> bool:
        h = hash(state) & _MASK64
        h2 = (((h * _GOLDEN) & _MASK64) >> 23) | 1
        mask = self.m - 1
        bits = self.bits
        new = False
        for i in range(self.k):
            pos = (h + i * h2) & mask
            byte = pos >> 3
            bit = 1 << (pos & 7)
            if not bits[byte] & bit:
                bits[byte] |= bit
                new = True
        if new:
            self.count += 1
        return new

    def __len__(self) -> int:
        return self.count

    @property
    def hash_factor(self) -> float:
        """Bits per stored state (SPIN's "hash factor"; coverage is good when > 100)."""
        return self.m / self.count if self.count else float("inf")

    def expected_coverage(self) -> float:
        """Estimated fraction of the visited states that were not wrongly matched: the mean,
        over the ``n`` insertions, of ``1 - (1 - e^(-k i / m))^k`` (the probability that the
        i-th new state finds all its k bits set by earlier ones)."""
        n, m, k = self.count, self.m, self.k
        if n == 0:
            return 1.0
        steps = min(n, 256)
        total = 0.0
        for j in range(1, steps + 1):
            i = n * j / steps
            total += (1.0 - math.exp(-k * i / m)) ** k
        return max(0.0, 1.0 - total / steps)

    def stats(self) -> dict[str, Any]:
        hf = self.hash_factor
        return {
            "store": "bitstate",
            "bitstate_bits": self.log2_bits,
            "hash_functions": self.k,
            "hash_factor": round(hf, 1) if math.isfinite(hf) else None,
            "expected_coverage": round(self.expected_coverage(), 6),
        }
