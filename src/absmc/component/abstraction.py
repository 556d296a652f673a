"""Predicate abstraction of the component's states for matching (Bao's thesis, ch. 2.3.2 and
Fig. 2.1): concrete states stay on the search stack — so only real concrete states ever reach
the environment — and the store keeps abstract states: the control part (each thread's call
stack of (function, pc), its status, the synchronization objects) and a bit vector of
predicate values. The initial predicates are the component's branch guards (Fig. 2.1, line
2: ``Φ := Guards(prog)``), evaluated in the frame that owns them, plus the user's predicates
(Python expressions over the globals and the locals of a thread's running function).

Matching on an abstraction may skip states (an under-approximation): a violation found is real
(it is replayed), no violation is not a proof.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, cast

from absmc.component.machine import ComponentSemantics
from absmc.component.translate import BRANCH
from absmc.component.values import UNBOUND
from absmc.errors import OptionError
from absmc.ir.steps import State


def compile_predicates(texts: Sequence[str]) -> list[tuple[str, Any]]:
    """User predicates as compiled Python expressions. Raises ``OptionError`` (option
    ``predicates``) for one that is not a Python expression."""
    out = []
    for t in texts:
        try:
            out.append((t, compile(t, "<predicate>", "eval")))
        except SyntaxError as e:
            raise OptionError(f"'{t}' is not a Python expression ({e.msg})", "predicates") from None
    return out


class PredicateAbstraction:
    """The abstraction function ``key(state)`` of a component (see the module docstring).
    ``guards``: use the component's branch guards as predicates; ``predicates``: the user's
    (compiled by :func:`compile_predicates`)."""

    def __init__(
        self,
        sem: ComponentSemantics,
        predicates: Sequence[tuple[str, Any]] = (),
        guards: bool = True,
    ) -> None:
        self.sem = sem
        self.predicates = list(predicates)
        self.guards = guards
        self.evaluations = 0

    def key(self, s: State) -> Hashable:
        sem = self.sem
        _, _, threads_enc, heap = cast(Any, s)
        control = []
        for name, _, st, frames, _ in threads_enc:
            kind = st if type(st) is not tuple else st[0]
            control.append((name, kind, tuple((f[0], f[1]) for f in frames)))
        sync_cells = tuple(c for c in heap if c[0] == "$")
        _, threads = sem.materialize(s)
        ns = sem.prog.namespace
        bits: list[bool | None] = []
        for th in threads:
            if not th.frames:
                continue
            fid, _, loc, _ = th.frames[-1]
            fc = sem.prog.funcs[fid]
            if self.guards:
                for ins in fc.instrs:
                    if ins.op != BRANCH or ins.fn is None or ins.cells:
                        continue
                    if any(loc[i] is UNBOUND for i in ins.reads):
                        bits.append(None)
                        continue
                    bits.append(_truth(ins.fn, [loc[i] for i in ins.slots]))
            if self.predicates:
                env = {n: v for n, v in zip(fc.slots, loc, strict=False) if v is not UNBOUND}
                for _, code in self.predicates:
                    bits.append(_truth(eval, [code, ns, env]))
        self.evaluations += 1
        return (tuple(control), sync_cells, tuple(bits))


def _truth(f: Callable[..., Any], args: list[Any]) -> bool | None:
    try:
        return bool(f(*args))
    except Exception:
        return None


def int_data(s: State) -> dict[str, int]:
    """The integer data of a state (thesis ch. 2.2, Kudra & Mercer's min/max scheme): integers
    in heap cells (``hN.J``: cell N, position J; cells are numbered canonically), tracked
    globals by position (``g0``, ...) and the locals of each thread's running function
    (``THREAD.FUNCTION.SLOT``)."""
    g, _, threads, heap = cast(Any, s)
    out: dict[str, int] = {}
    for n, cell in enumerate(heap):
        for j, v in enumerate(cell):
            if type(v) is int and j > 0 and not (cell[0] in ("O", "$") and j == 1):
                out[f"h{n}.{j}"] = v
    for i, v in enumerate(g):
        if type(v) is int:
            out[f"g{i}"] = v
    for name, _, _, frames, _ in threads:
        if frames:
            fid, _, loc, _ = frames[-1]
            for j, v in enumerate(loc):
                if type(v) is int:
                    out[f"{name}.{fid}.{j}"] = v
    return out


class AbstractMatchStore:
    """Abstract matching (thesis ch. 2): the store keeps the first concrete state of each
    abstract state (key) and counts the abstract states that matched a *different* concrete
    state (``merged``). No merge in a complete search means the search was exact. The
    subclasses say what the key is."""

    exact = False

    def __init__(self) -> None:
        self.noun = "abstract states"
        self.first: dict[Hashable, State] = {}
        self.merged = 0

    def match(self, key: Hashable, state: State) -> bool:
        """Whether ``state`` is new: its abstract state ``key`` was not stored yet."""
        first = self.first.get(key)
        if first is None:
            self.first[key] = state
            return True
        if first != state:
            self.merged += 1
        return False

    def __len__(self) -> int:
        return len(self.first)


class RangeStore(AbstractMatchStore):
    """A keyed store for the min/max range refinement (PA+NTP, no prover): it matches on
    ``key(state)`` extended with the truth of the equality predicates ``equalities`` (``data
    name == value``) and records per abstract state each integer's minimum and maximum."""

    def __init__(
        self, key: Callable[[State], Hashable], equalities: Sequence[tuple[str, int]]
    ) -> None:
        super().__init__()
        self.base = key
        self.equalities = list(equalities)
        self.ranges: dict[Hashable, dict[str, tuple[int, int]]] = {}

    def key(self, s: State) -> tuple[Hashable, dict[str, int]]:
        data = int_data(s)
        bits = tuple(data.get(n) == v for n, v in self.equalities)
        return (self.base(s), bits), data

    def insert(self, state: State) -> bool:
        k, data = self.key(state)
        r = self.ranges.setdefault(k, {})
        for n, v in data.items():
            old = r.get(n)
            r[n] = (v, v) if old is None else (min(old[0], v), max(old[1], v))
        return self.match(k, state)

    def stats(self, stopped: str | None = None) -> dict[str, Any]:
        return {"store": "range", "merged": self.merged, "equalities": len(self.equalities)}

    def refinement(self) -> list[tuple[str, int]]:
        """New predicates ``name == min`` for every integer whose range in some abstract state
        is not a single value (Kudra & Mercer's refinement)."""
        known = set(self.equalities)
        out: list[tuple[str, int]] = []
        for r in self.ranges.values():
            for n, (lo, hi) in r.items():
                if lo != hi and (n, lo) not in known:
                    known.add((n, lo))
                    out.append((n, lo))
        return out
