"""Weak fairness for acceptance cycles (SPIN's ``-f``), as one more product.

SPIN's weak fairness: a cycle counts only when every process, somewhere on the cycle, either
executes a step or is blocked (a process that stays enabled forever without moving makes the
cycle unfair). That is a generalized Büchi condition — one set per process, plus the property
automaton's accepting states — and SPIN checks it with its (k + 2)-copy (Choueka flag)
construction (Holzmann, *The SPIN Model Checker*, 2004, ch. 8, "Fairness"; pan's rules 1-3 in
``Src/pangen1.h``). :class:`FairSemantics` is that construction over a product
(:class:`~absmc.kernel.ltl.product.ProductSemantics`): a counter ``c`` in ``0 .. k + 1``
(``k`` processes) is appended to the product state, ``0`` idle, ``i`` in ``1 .. k`` waiting
for process ``i - 1``, ``k + 1`` the *seed* copy (the accepting one). A product step
``(s, q) -> (t, q')`` (the automaton moves ``q -> q'`` reading ``s``, then the system steps
``s -> t``) moves the counter as pan does within the same step:

1. rule 3: from the seed copy the counter is idle again;
2. rule 1: idle and ``q'`` accepting: wait for the highest live process (``live(s) - 1``; a
   process above it has not started or has ended: it is blocked);
3. rule 2: waiting for ``w``: a step of ``w`` passes the counter on to ``w - 1`` (after
   process 0, to the seed copy); when ``w`` has no step in ``s`` (blocked), every step does;
   in an atomic chain each command may pass it on once for its own process, as pan's steps
   do one by one;
4. a stutter step (every process blocked) while the counter runs goes to the seed copy
   (pan's "fairness default move").

An accepting cycle of this product (through a seed copy) is exactly a weakly fair accepting
cycle of the original one: between two seeds the counter went through an accepting state and
past every process; conversely a weakly fair cycle, repeated, moves the counter through every
copy. The nested DFS searches it unchanged.

pan differs in three places, all about which process counts as blocked or moving, not about
which states are stored: after a blocked process it tries the processes above it a second
time, so their steps also come with the counter unchanged (``spin_restart`` adds those
redundant steps, to compare state counts with pan's; the search does without them); a
rendezvous send leaves pan's "moved" mark unset, so pan takes the sender as blocked; and a
process that ends and is removed while the counter waits for it stops pan's counter. absmc
takes a process as moving or blocked exactly as the lasso replay does
(:func:`absmc.kernel.replay.trace.replay_lasso`): it moves when one of the step's commands is
its own, it is blocked when none of the state's steps has a command of it.

pan stores one entry per product state ``(s, q)`` with the copies and searches it was visited
in as bits, and prints that number as "states, stored" (the copies count towards "visited");
absmc's ``states`` counts ``(s, q, c)``: docs/ltl.md, "Weak fairness".

Labels: ``product label * (k + 2) + c'`` (:func:`fair_decode`). The product's failures and
state properties (its ``safety``) pass through unchanged but for the labels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from absmc.ir.steps import Expansion, Failure, Failures, State
from absmc.kernel.ltl.product import STUTTER, ProductSemantics, decode
from absmc.kernel.model.semantics import ModelWrapper


def fair_decode(label: int, processes: int) -> tuple[int, int]:
    """``(product label, counter after the step)`` of a fair-product label."""
    return label // (processes + 2), label % (processes + 2)


class FairSemantics(ModelWrapper):
    """``product`` with SPIN's weak-fairness counter (see the module docstring) over
    ``processes`` processes, ``process_of[g]`` the process of the base's command ``g``, and
    ``live(s)`` one more than the highest process that exists in system state ``s`` (default:
    all ``processes``); for a System: :func:`absmc.kernel.ltl.irproduct.fair_product`.
    ``spin_restart``: also pan's redundant steps after a blocked process (module docstring;
    for comparing state counts with pan). Properties and state checks are the product's
    (:class:`~absmc.kernel.model.semantics.ModelWrapper`)."""

    def __init__(
        self,
        product: ProductSemantics,
        processes: int,
        process_of: Sequence[int],
        live: Callable[[State], int] | None = None,
        spin_restart: bool = False,
    ) -> None:
        super().__init__(product)
        self.product = product
        self.k = processes
        self.process_of = list(process_of)
        self.live = live
        self.spin_restart = spin_restart
        #: system label -> the processes of its commands, in order
        self._procs: dict[int, tuple[int, ...]] = {}

    @property
    def initial(self) -> State:
        return (*self.product.initial, 0)

    def initial_states(self) -> list[State]:
        return [self.initial]

    def procs(self, ci: int) -> tuple[int, ...]:
        """The processes of the commands of system label ``ci``, in the step's order."""
        out = self._procs.get(ci)
        if out is None:
            cmds = self.product.base.commands_of(ci)
            out = self._procs[ci] = tuple(self.process_of[c] for c in cmds)
        return out

    def successors(self, fs: State) -> Expansion:
        ps, c = fs[:-1], fs[-1]
        succ, fails = self.product.successors(ps)
        width, seed = self.k + 2, self.k + 1
        if fails:
            fails = tuple(Failure(f[0] * width, f[1], f[2]) for f in fails)
        if not succ:
            return [], fails
        if c == seed:  # rule 3
            c = 0
        size = self.product.size
        accepting = self.product.accepting
        enabled: set[int] | None = None
        out = []
        for label, t in succ:
            ci, q2 = decode(label, size)
            nc = c
            if nc == 0 and q2 in accepting:  # rule 1
                nc = self.live(ps[:-1]) if self.live is not None else self.k
                if nc == 0:
                    nc = seed
            if nc == 0 or nc == seed:
                pass
            elif ci == STUTTER:  # every process is blocked
                nc = seed
            else:  # rule 2
                procs = self.procs(ci)
                if enabled is None:
                    enabled = self._enabled(succ)
                if nc - 1 in enabled:
                    nc = self._pass(nc, procs)
                else:
                    if self.spin_restart and procs[0] > nc - 1:
                        same = self._pass(nc, procs[1:])
                        out.append((label * width + same, (*t, same)))
                    nc = self._pass(nc - 1 if nc > 1 else seed, procs[1:])
            out.append((label * width + nc, (*t, nc)))
        return out, fails

    def _enabled(self, succ: Sequence[tuple[int, State]]) -> set[int]:
        """The processes with a command in some system step of the product steps ``succ``."""
        size = self.product.size
        out: set[int] = set()
        for label, _t in succ:
            ci, _q = decode(label, size)
            if ci != STUTTER:
                out.update(self.procs(ci))
        return out

    def _pass(self, c: int, procs: Sequence[int]) -> int:
        """Counter ``c`` after commands of ``procs`` in turn (rule 2: each command of the
        process waited for passes it on once)."""
        seed = self.k + 1
        for p in procs:
            if c == seed:
                break
            if p == c - 1:
                c = c - 1 if c > 1 else seed
        return c

    def step(self, label: int, fs: State) -> tuple[State | None, Failures]:
        raise NotImplementedError("fair product steps are replayed on the base semantics")

    def ok(self, fs: State) -> bool:
        return self.product.ok(fs[:-1])

    def violated(self, fs: State) -> list[int]:
        return self.product.violated(fs[:-1])

    def valid_end(self, fs: State) -> bool:
        return True

    def commands_of(self, label: int) -> tuple[int, ...]:
        return self.product.commands_of(label // (self.k + 2))

    def describe_state(self, fs: State) -> Mapping[str, object]:
        """The product's description, and the fairness counter as ``@fair``."""
        return {**self.product.describe_state(fs[:-1]), "@fair": fs[-1]}

    def describe_step(self, label: int) -> str:
        return self.product.describe_step(label // (self.k + 2))

    @property
    def dependencies(self) -> None:
        """Unknown (as the product's)."""
        return None

    def is_accepting(self, fs: State) -> bool:
        """The accepting copy ``k + 1``."""
        return fs[-1] == self.k + 1
