"""An independent, deliberately naive reachability oracle: breadth-first search over the
tree-walking reference semantics of ``absmc.ir.evaluate`` (no compiled code involved)."""

from __future__ import annotations

from dataclasses import dataclass

from absmc.ir.evaluate import EvalError, env_of, evaluate, reference_successors
from absmc.ir.system import System


@dataclass
class ReferenceResult:
    states: set[tuple[int, ...]]
    transitions: int
    violated: set[str]
    deadlock: bool
    model_error: bool
    complete: bool


def reference_explore(system: System, max_states: int = 200_000) -> ReferenceResult:
    init = system.initial_state()
    seen = {init}
    frontier = [init]
    transitions = 0
    violated: set[str] = set()
    deadlock = False
    model_error = False
    complete = True

    def check(s: tuple[int, ...]) -> None:
        env = env_of(system, s)
        for p in system.properties:
            try:
                bad = evaluate(p.bad, env)
            except EvalError:
                bad = 1
            if bad:
                violated.add(p.name)

    check(init)
    while frontier:
        nxt = []
        for s in frontier:
            succ = reference_successors(system, s)
            transitions += sum(1 for _, t in succ if not isinstance(t, EvalError))
            if any(isinstance(t, EvalError) for _, t in succ):
                model_error = True
            if not succ:
                deadlock = True
            for _, t in succ:
                if isinstance(t, EvalError) or t in seen:
                    continue
                seen.add(t)
                check(t)
                nxt.append(t)
                if len(seen) >= max_states:
                    return ReferenceResult(
                        seen, transitions, violated, deadlock, model_error, False
                    )
        frontier = nxt
    return ReferenceResult(seen, transitions, violated, deadlock, model_error, complete)
