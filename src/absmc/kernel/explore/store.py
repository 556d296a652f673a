"""State stores for explicit search, behind one small interface.

A store decides whether a state was *seen before*: ``insert(state)`` returns ``True`` when the
state is new (and remembers it). Implementations:

* :class:`ExactStore` — a set of states (exhaustive search);
* :class:`BitStateStore` — SPIN's bitstate/supertrace hashing: a bit array of ``2**log2_bits``
  bits and ``k`` hash functions (double hashing of :func:`state_hash64`); a state is considered
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
from array import array
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any, Protocol

State = tuple[int, ...]

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def state_hash64(state: State) -> int:
    """A 64-bit hash of ``state`` for the hash-compact and bitstate stores: Python's tuple
    hash, except for a state with a ``-1`` among its values, whose 64-bit words are hashed by
    BLAKE2b instead (Python hashes ``-1`` as ``-2``, so the tuple hash makes ``(x, -1)`` and
    ``(x, -2)`` collide every time, where the stores' statements assume a collision only by
    chance). A state that is not a tuple of 64-bit integers (a component's values) keeps
    Python's hash. What remains systematic: integers that differ by a multiple of 2^61 - 1
    (Python's hash modulus) hash alike."""
    if -1 not in state:
        return hash(state) & _MASK64
    try:
        words = array("q", state).tobytes()
    except (TypeError, OverflowError):
        return hash(state) & _MASK64
    return int.from_bytes(blake2b(words, digest_size=8).digest(), "little")


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

    def stats(self, stopped: str | None = None) -> dict[str, Any]:
        """Store-specific statistics for the result (e.g. hash factor); ``stopped``: why the
        search ended early, if it did (a store whose figures depend on it says so)."""
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

    def stats(self, stopped: str | None = None) -> dict[str, Any]:
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

    def stats(self, stopped: str | None = None) -> dict[str, Any]:
        return {"store": self.name}


class HashCompactStore:
    """Hash-compact storage, as SPIN's ``-DHC``: each state is kept as a 64-bit hash
    (:func:`state_hash64`), 8 bytes of payload instead of the whole tuple. States whose hashes
    collide are taken as one, so a search may omit states (never add any): not a proof. With ``n``
    states the expected number of collisions is about ``n² / 2⁶⁵``."""

    exact = False
    noun = "states"

    def __init__(self) -> None:
        self.hashes: set[int] = set()

    def insert(self, state: State) -> bool:
        n = len(self.hashes)
        self.hashes.add(state_hash64(state))
        return len(self.hashes) != n

    def __len__(self) -> int:
        return len(self.hashes)

    def expected_collisions(self) -> float:
        """The expected number of colliding pairs among the stored states (birthday bound)."""
        n = len(self.hashes)
        return n * (n - 1) / 2 / 2.0**64

    def stats(self, stopped: str | None = None) -> dict[str, Any]:
        return {
            "store": "hash-compact",
            "expected_collisions": float(f"{self.expected_collisions():.3g}"),
        }


class BitStateStore:
    """Bitstate (supertrace) hashing, as SPIN's ``-DBITSTATE``.

    ``log2_bits`` sets the array size (``2**log2_bits`` bits, ``2**(log2_bits-3)`` bytes);
    ``k`` is the number of hash functions (SPIN's ``-k``, default 3): double hashing of
    :func:`state_hash64`, positions ``h + i * h2``. A state counts as seen when all its ``k``
    bits are set, so a state never stored may be *falsely matched* — and then none of the states
    only reachable through it are visited either: one early false match can cut off most of the
    state space. What the store can honestly say about coverage (:meth:`coverage`):

    * SPIN's *hash factor* (bits per stored state) and the fraction of bits set (``fill``);
    * ``matched``: insertions that found all ``k`` bits set (revisits and false matches);
    * an *observed* false-match count: a hash-selected sample of 1 in :data:`SAMPLE` states is
      also kept exactly (a shadow set, at most :data:`SHADOW_MAX` states); a sampled state
      matched by the bits but absent from the shadow set is a certain false match;
    * a bound on the probability that anything was omitted, ``(stored + 1) * fill**k``: under
      uniform hashing each lookup of a state not seen before matches falsely with probability
      at most ``fill**k`` (the fill only grows), and until the first false match every such
      lookup stores a state, so the first false match is among the first ``stored + 1`` of
      them (a union bound).

    No coverage *percentage* is claimed: a false match may cut off any fraction of the
    reachable states. Raises ``ValueError`` for ``log2_bits`` outside 3..40 or ``k`` outside
    1..32.
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
        #: [stored, matched, sampled new, observed false matches, bits set]
        self.counts = [0, 0, 0, 0, 0]
        self.shadow: set[State] = set()
        self.false_matched: set[State] = set()
        self.insert: Callable[[State], bool] = self._make_insert()

    def _make_insert(self) -> Callable[[State], bool]:
        """``insert(state) -> new?`` with the ``k`` probes unrolled (generated once per ``k``:
        the hot loop of a bitstate search calls it once per transition)."""
        k = self.k
        lines = [
            "def insert(state):",
            "    h = hash64(state)",
            f"    h2 = (((h * {_GOLDEN}) & 0xFFFFFFFFFFFFFFFF) >> 23) | 1",
        ]
        for i in range(k):
            pos = "h" if i == 0 else f"(h + {i} * h2)"
            lines.append(f"    p{i} = {pos} & mask; q{i} = 1 << (p{i} & 7); p{i} >>= 3")
        seen = " and ".join(f"bits[p{i}] & q{i}" for i in range(k))
        lines += [
            f"    if {seen}:",
            "        counts[1] += 1",
            f"        if h >> {64 - _SAMPLE_BITS} == 0:",
            "            sampled_match(state)",
            "        return False",
        ]
        lines.append("    c = 0")
        for i in range(k):
            lines.append(f"    if not bits[p{i}] & q{i}: bits[p{i}] |= q{i}; c += 1")
        lines += [
            "    counts[0] += 1",
            "    counts[4] += c",
            f"    if h >> {64 - _SAMPLE_BITS} == 0:",
            "        sampled_new(state)",
            "    return True",
        ]
        ns: dict[str, Any] = {
            "mask": self.m - 1,
            "hash64": state_hash64,
            "bits": self.bits,
            "counts": self.counts,
            "sampled_match": self._sampled_match,
            "sampled_new": self._sampled_new,
        }
        exec("\n".join(lines), ns)
        fn: Callable[[State], bool] = ns["insert"]
        return fn

    def _sampled_new(self, state: State) -> None:
        if len(self.shadow) < SHADOW_MAX:
            self.shadow.add(state)
            self.counts[2] += 1

    def _sampled_match(self, state: State) -> None:
        # sampled states are all in the shadow set until it is full; after that no verdict
        full = len(self.shadow) >= SHADOW_MAX
        if not full and state not in self.shadow and state not in self.false_matched:
            self.false_matched.add(state)
            self.counts[3] += 1

    def __len__(self) -> int:
        return self.counts[0]

    @property
    def count(self) -> int:
        """States stored (insertions that set at least one bit)."""
        return self.counts[0]

    @property
    def hash_factor(self) -> float:
        """Bits per stored state (SPIN's "hash factor"; SPIN calls > 100 good coverage)."""
        return self.m / self.count if self.count else float("inf")

    def fill(self) -> float:
        """The fraction of the ``2**log2_bits`` bits that are set."""
        return self.counts[4] / self.m

    def coverage(self) -> BitStateCoverage:
        """What the search may have missed (see the class docstring)."""
        stored, matched, sampled, observed, _ones = self.counts
        fill = self.fill()
        return BitStateCoverage(
            hash_factor=self.hash_factor,
            fill=fill,
            matched=matched,
            sampled=sampled + observed,
            observed_false_matches=observed,
            union_bound=(stored + 1) * fill**self.k,
        )

    def stats(self, stopped: str | None = None) -> dict[str, Any]:
        """The store's statistics; ``stopped``: why the search ended early, if it did (the
        coverage statement then claims nothing)."""
        return bitstate_stats(self.coverage(), self.log2_bits, self.k, stopped)


def not_a_proof(states: int, stats: Mapping[str, Any], detail: str = "") -> str | None:
    """Why a search that found no violation in ``states`` states proves nothing, from its
    store's ``stats`` (``Store.stats``): a bitstate store states its coverage, a hash-compact
    store the caller's ``detail`` (e.g. the probability of an omission); None for an exact
    store. Shared by the explicit search on both back ends and the component checker."""
    store = stats.get("store")
    if store == "bitstate":
        return (
            f"bitstate search found no violation in {states:,} states ({stats['coverage']}); "
            "not a proof"
        )
    if store == "hash-compact":
        more = f" ({detail})" if detail else ""
        return f"hash-compact search found no violation in {states:,} states{more}; not a proof"
    return None


def bitstate_stats(
    cov: BitStateCoverage, log2_bits: int, k: int, stopped: str | None = None
) -> dict[str, Any]:
    """The statistics of a bitstate store of ``2**log2_bits`` bits and ``k`` hash functions
    with coverage ``cov`` (shared by :class:`BitStateStore` and the native back end's bitstate
    store); ``stopped``: why the search ended early, if it did (the statement then claims
    nothing)."""
    hf = cov.hash_factor
    return {
        "store": "bitstate",
        "bitstate_bits": log2_bits,
        "hash_functions": k,
        "hash_factor": round(hf, 1) if math.isfinite(hf) else None,
        "bits_set": float(f"{cov.fill:.4g}"),
        "sampled_lookups": cov.sampled,
        "observed_false_matches": cov.observed_false_matches,
        "false_match_rate": float(f"{cov.false_match_rate:.4g}"),
        "omission_probability_bound": float(f"{cov.omission_probability_bound:.4g}"),
        "coverage": cov.statement(stopped),
    }


#: one state in ``2**_SAMPLE_BITS`` (by the top bits of its hash) is also kept exactly
_SAMPLE_BITS = 6
SAMPLE = 1 << _SAMPLE_BITS
#: the most sampled states kept exactly (then the sample stops growing)
SHADOW_MAX = 1 << 20


@dataclass(frozen=True)
class BitStateCoverage:
    """What a bitstate search can say about the states it missed (see
    :class:`BitStateStore`): SPIN's ``hash_factor`` (bits per stored state), the fraction of
    bits set (``fill``), the insertions that found all bits set (``matched``), the sampled
    lookups of states not seen before (``sampled``) and the certain false matches among them
    (``observed_false_matches``), and ``union_bound``, ``(stored + 1) * fill**k``."""

    hash_factor: float
    fill: float
    matched: int
    sampled: int
    observed_false_matches: int
    union_bound: float

    @property
    def false_match_rate(self) -> float:
        """Observed false matches per sampled lookup of a state not seen before."""
        return self.observed_false_matches / self.sampled if self.sampled else 0.0

    @property
    def omission_probability_bound(self) -> float:
        """An upper bound on the probability that some state was falsely matched (the union
        bound, at most 1; 1 when a false match was seen)."""
        if self.observed_false_matches:
            return 1.0
        return min(1.0, self.union_bound)

    def statement(self, stopped: str | None = None) -> str:
        """One line for reports: the hash factor, the observed false matches and either the
        bound on the probability of an omission (when at most 1% and the search was not
        ``stopped`` early: a limit, the first violation) or that coverage is unknown; never a
        coverage percentage."""
        hf = f"{self.hash_factor:,.1f}" if math.isfinite(self.hash_factor) else "inf"
        seen = (
            f"{self.observed_false_matches:,} false match(es) observed in "
            f"{self.sampled:,} sampled lookups"
        )
        p = self.omission_probability_bound
        if stopped is not None:
            tail = f"coverage unknown: a partial search ({stopped})"
        elif p <= 0.01:
            tail = f"probability of any omission <= {p:.2g} (uniform hashing)"
        else:
            tail = "coverage unknown: a false match cuts off every state behind it"
        return f"hash factor {hf}, {self.fill:.3%} of bits set, {seen}; {tail}"
