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
