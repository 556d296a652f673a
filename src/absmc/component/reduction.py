"""Partial-order reduction for the component's threads: persistent sets (Godefroid, *Partial-
Order Methods for the Verification of Concurrent Systems*, LNCS 1032, 1996, ch. 4, Def. 4.1
and Thm. 4.3) with conditional independence checked by executing the steps (Katz & Peled,
1992; Godefroid & Pirottin, CAV 1993, "refining dependencies") and a static cycle proviso
(every cycle of the reduced graph contains a fully expanded state: Peled, CAV 1993, condition
C3; Clarke, Grumberg & Peled, *Model Checking*, ch. 10.5).

At a state ``s`` with several threads enabled, the expanded set may be the steps of some of
the threads ``K`` alone, when that set is **persistent** in ``s``: every sequence of steps of
the *other* threads from ``s`` (``K`` not moving) consists of steps independent of ``K``'s
steps in the state they are taken from. This is checked here by exploring that sub-space —
the states reachable from ``s`` by steps of the other threads — completely (at most
:data:`BUDGET` states, else the set is not taken), and for each of its edges ``x --b--> y`` and
each step ``a`` of ``K`` testing that the two commute exactly: ``a`` is enabled at ``x`` and
``y`` with the same labels, ``b`` is enabled at ``a(x)``, ``a(b(x)) == b(a(x))`` (states are
canonical, so this is equality of the component's states), and each step raises the same
failures in both orders. ``K`` starts as every enabled thread (less those with a step that
is not forward, below) and threads are left out of it greedily while it stays persistent.
Independence is thus decided by the machine's own semantics — heap locations
by identity, lock, condition and queue state, thread start and join, everything a step
reads or writes — not by a syntactic approximation. A step that calls the environment (other
than a pure built-in or a built-in container's method on plain data, :func:`closed_call`) is
never reordered (the environment's state is not in the component's state): a state where
one occurs is expanded fully, and a sub-space with one gives no reduction.

What this preserves: every deadlock (Godefroid Thm. 4.3: ``K``'s steps stay enabled along
every path of the others) and every failing step (assertion, uncaught exception): a failing
step ``f`` reached by a path ``w`` from ``s`` either lies after a step of ``K`` on ``w`` —
then that step commutes to the front — or ``w·f`` consists of other threads' steps, each
commuting with ``K``'s, and stays a path after a step of ``K``. Against the ignoring problem
(``f`` postponed forever around a cycle) a set ``K`` short of all enabled threads is taken
only when each of its steps is *forward*: it strictly increases its thread's stack of
program counters in the
lexicographic order (a prefix before its extensions). A cycle returns every thread's stack to
its value, so each cycle has a step that is not forward, taken from a fully expanded state
(the static proviso of Kurshan, Levin, Minea, Peled & Yenigün, "Static partial order
reduction", TACAS 1998, with back edges given by the pc order).

Counterexamples are paths of real steps: they replay on the concrete semantics unchanged.
"""

from __future__ import annotations

import builtins
import types
from collections import defaultdict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from absmc.ir.steps import Failures, State

if TYPE_CHECKING:
    from absmc.component.machine import ComponentSemantics

#: the most states of the other threads' sub-space explored to show one set persistent
BUDGET = 12

Steps = dict[int, tuple[State | None, Failures]]
"""label -> (successor or None when blocked, failures) of one thread's steps."""


def pcs(s: State, tid: int) -> tuple[int, ...]:
    """Thread ``tid``'s stack of program counters in ``s`` (outermost frame first)."""
    return tuple([f[1] for f in cast(Any, s)[2][tid][3]])


class Reduction:
    """Persistent-set reduction of :meth:`ComponentSemantics.successors` (module docstring).
    Statistics: ``reduced`` (expansions that kept one thread's steps of several enabled
    threads), ``full`` (expansions with several threads enabled kept whole), ``tries`` (sets
    tested), ``steps`` (steps executed by the tests)."""

    def __init__(self, sem: ComponentSemantics, budget: int = BUDGET) -> None:
        self.sem = sem
        self.budget = budget
        #: the steps run during one :meth:`reduce`, by (id(state), thread, choice); the states
        #: are kept alive in ``_alive`` so that their ids stay theirs
        self._runs: dict[tuple[int, int, int], tuple[State | None, Failures, int, bool]] = {}
        self._alive: list[State] = []
        self.reduced = 0
        self.full = 0
        self.tries = 0
        self.steps = 0

    def stats(self) -> dict[str, Any]:
        """The statistics as JSON fields."""
        return {
            "reduction": "persistent-sets",
            "reduced_expansions": self.reduced,
            "full_expansions": self.full,
            "reduction_tries": self.tries,
            "reduction_steps": self.steps,
        }

    def reduce(self, s: State, by_thread: dict[int, Steps], env: set[int]) -> set[int] | None:
        """The threads whose steps form a persistent set at ``s`` (``by_thread``: every
        thread's steps from ``s``, blocked ones included; ``env``: the threads whose steps
        called the environment), or None for a full expansion. Greedy: starting from every
        enabled thread, each thread in turn is left out when the rest stays persistent."""
        enabled = [t for t, st in by_thread.items() if any(v[0] is not None for v in st.values())]
        if len(enabled) < 2 or env:
            return None
        try:
            return self._reduce(s, by_thread, enabled)
        finally:
            self._runs.clear()
            self._alive.clear()

    def _run(self, s: State, tid: int, choice: int) -> tuple[State | None, Failures, int, bool]:
        """Thread ``tid``'s step ``choice`` from ``s`` (cached during one :meth:`reduce`):
        (successor or None, failures, number of choices, called the hidden environment)."""
        key = (id(s), tid, choice)
        hit = self._runs.get(key)
        if hit is not None:
            return hit
        sem = self.sem
        calls = sem.hidden_calls
        target, fails, nalts = sem._run(s, tid, choice, tid * _labels() + choice)
        self.steps += 1
        out = (target, fails, nalts, sem.hidden_calls != calls)
        self._alive.append(s)
        self._runs[key] = out
        return out

    def _reduce(self, s: State, by_thread: dict[int, Steps], enabled: list[int]) -> set[int] | None:
        keep: list[int] = []
        out: list[int] = []
        for tid in enabled:
            mine = by_thread[tid]
            before = pcs(s, tid)
            if any(v[0] is None for v in mine.values()) or not all(
                before < pcs(cast(State, v[0]), tid) for v in mine.values()
            ):
                # the cycle proviso: a set without all threads has only forward steps
                out.append(tid)
            else:
                keep.append(tid)
        if not keep:
            self.full += 1
            return None
        if out and not self._persistent(s, keep, by_thread):
            self.full += 1
            return None
        for tid in list(keep):
            if len(keep) == 1:
                break
            trial = [t for t in keep if t != tid]
            if self._persistent(s, trial, by_thread):
                keep = trial
        if len(keep) == len(enabled):
            self.full += 1
            return None
        self.reduced += 1
        return set(keep)

    def _steps(self, s: State, tid: int) -> Steps | None:
        """Thread ``tid``'s steps from ``s``; None when one of them calls the environment."""
        out: Steps = {}
        choice = 0
        base = tid * _labels()
        while True:
            target, fails, nalts, hidden = self._run(s, tid, choice)
            if hidden:
                return None
            out[base + choice] = (target, fails)
            choice += 1
            if choice >= nalts:
                return out

    def _persistent(self, s: State, keep: list[int], by_thread: dict[int, Steps]) -> bool:
        """The steps of the threads ``keep`` are a persistent set at ``s``: explore the
        states the other threads reach from ``s`` and check that every edge commutes with
        each step of ``keep`` (module docstring)."""
        self.tries += 1
        labels = {t: sorted(by_thread[t]) for t in keep}
        at: dict[State, dict[int, Steps]] = {s: {t: by_thread[t] for t in keep}}
        todo = [s]
        first = True
        while todo:
            x = todo.pop()
            kx = at[x]
            threads = cast(Any, x)[2]
            for u in range(len(threads)):
                if u in kx or threads[u][2] in ("D", "X"):
                    continue
                if first:
                    ux: Steps | None = by_thread.get(u)
                    if ux is None:
                        continue
                else:
                    ux = self._steps(x, u)
                    if ux is None:
                        return False
                for lb, (y, fy) in ux.items():
                    if y is None:
                        if fy:
                            return False
                        continue
                    ky = at.get(y)
                    if ky is None:
                        if len(at) >= self.budget:
                            return False
                        ky = {}
                        for t in keep:
                            ty = self._steps(y, t)
                            if ty is None or sorted(ty) != labels[t]:
                                return False
                            if any(v[0] is None for v in ty.values()):
                                return False
                            ky[t] = ty
                        at[y] = ky
                        todo.append(y)
                    choice = lb - u * _labels()
                    for t in keep:
                        for la in labels[t]:
                            ax_t, ax_f = kx[t][la]
                            ay_t, ay_f = ky[t][la]
                            if ax_f != ay_f or ax_t is None:
                                return False
                            # the other thread's step after this one: the same state
                            z, fz, nalts, hidden = self._run(ax_t, u, choice)
                            if hidden or z is None or choice >= nalts:
                                return False
                            if z != ay_t or fz != fy:
                                return False
            first = False
        return True


#: built-in functions whose effect is on their arguments only (with plain arguments)
_PURE = frozenset(
    {
        "len", "sorted", "min", "max", "sum", "abs", "any", "all", "isinstance", "range",
        "enumerate", "zip", "reversed", "list", "dict", "set", "tuple", "frozenset", "int",
        "float", "str", "bool", "repr", "divmod", "round", "ord", "chr", "pow", "format",
        "hex", "bin", "oct", "print",
    }
)  # fmt: skip

_CONTAINERS = (list, dict, set, frozenset, tuple, deque, defaultdict, bytearray)
_ATOMS = (int, float, str, bool, bytes, type(None), complex)


def _plain(x: Any, owned: Callable[[type], bool], depth: int = 0) -> bool:
    """``x`` is component data: atoms, instances of owned classes, containers of plain
    values (at most 4 levels, else not plain)."""
    t = type(x)
    if t in _ATOMS or owned(t):
        return True
    if depth > 3 or not isinstance(x, _CONTAINERS):
        return False
    if isinstance(x, dict):
        return all(
            _plain(k, owned, depth + 1) and _plain(v, owned, depth + 1) for k, v in x.items()
        )
    return all(_plain(v, owned, depth + 1) for v in x)


def closed_call(
    f: Any, args: tuple[Any, ...], kwargs: dict[str, Any], owned: Callable[[type], bool]
) -> bool:
    """A native call whose whole effect lies in the component's state: a pure built-in
    function or a method of a built-in container, with plain arguments (and receiver). Other
    calls may read or write the environment's hidden state: such steps are never reordered."""
    self_ = getattr(f, "__self__", None)
    if type(f) is type:
        if f not in _CONTAINERS and f not in _ATOMS and f is not range:
            return False
    elif not isinstance(f, (types.BuiltinFunctionType, types.MethodWrapperType)):
        return False
    elif self_ is builtins:
        if f.__name__ not in _PURE:
            return False
    elif not (isinstance(self_, _CONTAINERS) and _plain(self_, owned)):
        return False
    return all(_plain(a, owned) for a in args) and all(_plain(v, owned) for v in kwargs.values())


def _labels() -> int:
    from absmc.component.machine import LABELS

    return LABELS


__all__ = ["BUDGET", "Reduction", "closed_call", "pcs"]
