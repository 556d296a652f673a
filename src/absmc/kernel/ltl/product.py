"""The synchronous product of a model (the model interface,
:class:`~absmc.kernel.model.semantics.Semantics`) with a Büchi automaton (an LTL property's
violation automaton or a ``never`` claim), itself a model, so that the one search of
:mod:`absmc.kernel.explore.search` explores it. The product reads no IR: the automaton's edge
guards come compiled to predicates on the model's states (``guard``; for a System,
:func:`absmc.kernel.ltl.irproduct.product_of` compiles them and gives SPIN's step order).

* A product state is the system state with the automaton state appended: ``s + (q,)``.
* From ``(s, q)`` the automaton moves first, reading ``s`` (an edge ``q -> q'`` whose guard holds
  in ``s``), then the system takes one step ``s -> t``: the successor is ``(t, q')`` (SPIN's
  synchronous product with a never claim).
* Stuttering (SPIN's semantics with a never claim): a system state without steps repeats
  forever: ``(s, q) -> (s, q')`` — valid end state or not (SPIN 6 disables the invalid-end-state
  check when a claim is present and stutters every terminal state; absmc still reports an
  invalid end state as a deadlock, in the safety search). Without ``stutter`` (non-progress
  cycles, SPIN's ``-l``), a terminal state has no product successor.
* Labels: ``(system label + 1) * |Q| + q'`` (:func:`encode`, :func:`decode`); the system label
  ``STUTTER`` (-1) is a stutter step.
* Failures of the system (model errors, assertions) and the base's state properties are
  reported only with ``safety`` (SPIN: "assertion violations + (if within scope of claim)"):
  a failing system step of ``(s, q)`` is one whose claim move exists, labelled with the first
  claim move; with ``deadlock`` also a terminal ``s`` that is no valid end state (labelled with
  a stutter step, which :func:`system_path` drops). Paths in product labels become system
  paths by :func:`system_path` (docs/ltl.md, "What one product search checks").
* :func:`covers_every_state`: when the automaton can always follow the system from its
  initial state (e.g. that state loops on ``true``), every reachable system state appears in
  the product, so an exhaustive product search has checked the safety properties on the
  whole state space.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from absmc.ir.expr import Const, Expr, Op
from absmc.ir.ltl import Automaton
from absmc.ir.steps import (
    NO_DEADLOCK,
    NO_FAILURES,
    NO_MODEL_ERROR,
    Expansion,
    Failure,
    Failures,
    State,
    Successors,
)
from absmc.kernel.model.semantics import ModelWrapper, PropertyInfo, Semantics

#: the system label of a stutter step
STUTTER: Final = -1


def encode(label: int, target: int, size: int) -> int:
    """The product label of system label ``label`` (or :data:`STUTTER`) with automaton edge
    target ``target`` (``size`` automaton states)."""
    return (label + 1) * size + target


def decode(plabel: int, size: int) -> tuple[int, int]:
    """``(system label or STUTTER, automaton target)`` of a product label."""
    return plabel // size - 1, plabel % size


def system_path(plabels: list[int], size: int) -> list[int]:
    """The system labels of a path in product labels (``size`` automaton states; stutter steps,
    which leave the system state as it is, are dropped)."""
    out = []
    for plabel in plabels:
        ci = plabel // size - 1
        if ci != STUTTER:
            out.append(ci)
    return out


def covering_states(automaton: Automaton) -> frozenset[int]:
    """The largest set ``C`` of automaton states such that from each ``q`` in ``C`` the guards
    of the edges into ``C`` cover every system state: their disjunction is valid when each
    atom (a maximal subexpression that is not ``&&``, ``||``, ``!`` or a constant) is read as an
    independent proposition (sound: a propositionally valid guard is valid on every state).
    By induction over the system's steps, when the initial automaton state is in ``C`` every
    reachable system state ``s`` appears in the product as some ``(s, q)`` with ``q`` in ``C``."""
    cover = set(range(automaton.size))
    changed = True
    while changed:
        changed = False
        for q in sorted(cover):
            guards = [e.guard for e in automaton.edges[q] if e.target in cover]
            if not _valid(guards):
                cover.discard(q)
                changed = True
    return frozenset(cover)


def covers_every_state(automaton: Automaton) -> bool:
    """Whether a product search with ``automaton`` that ends without a limit or a cycle has
    visited every reachable system state: its initial state is in :func:`covering_states`
    (e.g. Spot's automaton of ``!(G p)`` or ``!(G (p -> F q))``, whose initial state loops on
    ``true`` or on ``p`` beside a ``!p`` edge to a state that loops on ``true``)."""
    return automaton.initial in covering_states(automaton)


#: the most atoms :func:`_valid` enumerates (beyond them it answers "not valid")
_MAX_ATOMS = 12


def _valid(guards: list[Expr]) -> bool:
    """Whether the disjunction of ``guards`` is propositionally valid (see
    :func:`covering_states`); ``False`` past :data:`_MAX_ATOMS` atoms."""
    atoms: dict[Expr, int] = {}
    for g in guards:
        _atoms(g, atoms)
    if len(atoms) > _MAX_ATOMS:
        return False
    return all(any(_holds(g, atoms, bits) for g in guards) for bits in range(1 << len(atoms)))


def _atoms(e: Expr, out: dict[Expr, int]) -> None:
    if isinstance(e, Op) and e.op in ("&&", "||", "!"):
        for a in e.args:
            _atoms(a, out)
    elif not isinstance(e, Const):
        out.setdefault(e, len(out))


def _holds(e: Expr, atoms: dict[Expr, int], bits: int) -> bool:
    if isinstance(e, Const):
        return e.value != 0
    if isinstance(e, Op) and e.op == "&&":
        return all(_holds(a, atoms, bits) for a in e.args)
    if isinstance(e, Op) and e.op == "||":
        return any(_holds(a, atoms, bits) for a in e.args)
    if isinstance(e, Op) and e.op == "!":
        return not _holds(e.args[0], atoms, bits)
    return bool(bits >> atoms[e] & 1)


#: an automaton edge guard (an IR condition) -> a predicate on the model's states
GuardCompiler = Callable[[Any], Callable[[State], bool]]


class ProductSemantics(ModelWrapper):
    """``base`` × ``automaton`` (see the module docstring): a
    :class:`~absmc.kernel.model.semantics.ModelWrapper` of ``base``; ``guard`` compiles the
    automaton's edge guards to predicates on ``base``'s states; ``step`` is not offered (replay
    goes through :func:`absmc.kernel.replay.trace.replay_lasso` on the base semantics). With
    ``safety`` the base's failures and state properties are reported on the product's steps and
    states, with ``deadlock`` (and ``safety``) also its invalid end states (see the module
    docstring). With ``order`` (a sort key of the base's step labels, e.g. SPIN's: highest
    process first) the system's steps come in that order, which decides where a depth-first
    search meets its first cycle (not what it finds in the end)."""

    def __init__(
        self,
        base: Semantics,
        automaton: Automaton,
        guard: GuardCompiler,
        stutter: bool = True,
        safety: bool = False,
        deadlock: bool = False,
        order: Callable[[int], int] | None = None,
    ) -> None:
        super().__init__(base)
        self.stutter = stutter
        self.safety = safety
        self.deadlock = safety and deadlock
        #: with ``order``: system label -> its sort key, filled lazily
        self.rank: dict[int, int] | None = {} if order is not None else None
        self.order = order
        self.automaton = automaton
        self.size = automaton.size
        cache: dict[Any, Callable[[State], bool]] = {}
        self.edges: list[list[tuple[int, Callable[[State], bool]]]] = []
        for es in automaton.edges:
            row = []
            for e in es:
                fn = cache.get(e.guard)
                if fn is None:
                    fn = cache[e.guard] = guard(e.guard)
                row.append((e.target, fn))
            self.edges.append(row)
        self.accepting = automaton.accepting
        self.final = automaton.final

    @property
    def properties(self) -> tuple[PropertyInfo, ...]:
        return self.base.properties if self.safety else ()

    def describe_state(self, ps: State) -> Mapping[str, object]:
        """The base's description of the system part, and the automaton state as ``@claim``."""
        return {**self.base.describe_state(ps[:-1]), "@claim": ps[-1]}

    def describe_step(self, label: int) -> str:
        ci, _ = decode(label, self.size)
        return "(stutter)" if ci == STUTTER else self.base.describe_step(ci)

    @property
    def dependencies(self) -> None:
        """Unknown: every product step also moves the automaton, which reads the state."""
        return None

    @property
    def state_checks(self) -> bool:
        return self.safety and self.base.state_checks

    @property
    def initial(self) -> State:
        return (*self.base.initial, self.automaton.initial)

    def initial_states(self) -> list[State]:
        return [self.initial]

    def moves(self, ps: State) -> list[int]:
        """The automaton states reachable by one claim move from product state ``ps``."""
        s = ps[:-1]
        return [t for t, g in self.edges[ps[-1]] if g(s)]

    def successors(self, ps: State) -> Expansion:
        """The product steps of ``ps`` (failures only with ``safety``: see the module
        docstring)."""
        s = ps[:-1]
        size = self.size
        targets = [t for t, g in self.edges[ps[-1]] if g(s)]
        if not targets:
            return [], NO_FAILURES
        succ, fails = self.base.successors(s)
        if self.rank is not None and len(succ) > 1:
            succ = sorted(succ, key=self._rank)
        found = NO_FAILURES
        if self.safety and (fails or not succ):
            found = self._failures(s, succ, fails, targets[0])
        if not succ:
            if not self.stutter:
                return [], found
            return [((STUTTER + 1) * size + q, (*s, q)) for q in targets], found
        return [((ci + 1) * size + q, (*t, q)) for q in targets for ci, t in succ], found

    def _rank(self, step: tuple[int, State]) -> int:
        """Sort key of a system step (``order`` of its label, remembered)."""
        assert self.rank is not None and self.order is not None
        ci = step[0]
        key = self.rank.get(ci)
        if key is None:
            key = self.rank[ci] = self.order(ci)
        return key

    def _failures(self, s: State, succ: Successors, fails: Failures, q: int) -> Failures:
        """The base's failures at ``s`` as product failures (claim move to ``q``), and the
        deadlock of a terminal ``s`` (not after a model error, as in the kernel's search)."""
        size = self.size
        out = [Failure((f[0] + 1) * size + q, f[1], f[2]) for f in fails]
        if (
            not succ
            and self.deadlock
            and not any(f[2] == NO_MODEL_ERROR for f in fails)
            and not self.base.valid_end(s)
        ):
            out.append(
                Failure((STUTTER + 1) * size + q, "deadlock: no command is enabled", NO_DEADLOCK)
            )
        return tuple(out)

    def step(self, label: int, ps: State) -> tuple[State | None, Failures]:
        raise NotImplementedError("product steps are replayed on the base semantics")

    def ok(self, ps: State) -> bool:
        return not self.safety or self.base.ok(ps[:-1])

    def violated(self, ps: State) -> list[int]:
        return self.base.violated(ps[:-1]) if self.safety else []

    def valid_end(self, ps: State) -> bool:
        return True

    def commands_of(self, label: int) -> tuple[int, ...]:
        ci, _ = decode(label, self.size)
        return () if ci == STUTTER else self.base.commands_of(ci)

    def is_accepting(self, ps: State) -> bool:
        """The automaton part of ``ps`` is accepting."""
        return ps[-1] in self.accepting
