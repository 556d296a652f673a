"""An independent check of counterexamples: replay a trace on the reference semantics
(:mod:`absmc.ir.evaluate`, not the compiled code the engines search with)."""

from __future__ import annotations

from absmc.ir import System
from absmc.ir.evaluate import EvalError, env_of, evaluate, execute, reference_successors
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR
from absmc.kernel.run.result import PropertyResult


def _state_of(system: System, step_state: object) -> tuple[int, ...]:
    assert isinstance(step_state, dict) or hasattr(step_state, "items")
    values = dict(step_state.items())  # type: ignore[attr-defined]
    return tuple(int(values[v.name]) for v in system.variables)


def _fails(system: System, state: tuple[int, ...]) -> bool:
    """Some command is a model error in ``state`` (reference semantics)."""
    return any(isinstance(x, EvalError) for _, x in reference_successors(system, state))


def replays(system: System, r: PropertyResult) -> str | None:
    """``None`` when ``r``'s trace is a run of ``system`` that violates ``r.property`` on the
    reference semantics, else what is wrong."""
    trace = r.trace
    if trace is None or not trace.steps:
        return "no trace"
    states = [_state_of(system, s.state) for s in trace.steps]
    init = tuple(v.init for v in system.variables)
    if states[0] != init:
        return "does not start in the initial state"
    for k in range(1, len(states)):
        ci = trace.steps[k].command_index
        if ci is None:
            return f"step {k} has no command"
        try:
            nxt = execute(system, system.commands[ci], states[k - 1])
        except EvalError as err:
            return f"step {k} is a model error: {err}"
        if nxt != states[k]:
            return f"step {k} does not lead to the trace's state"
    last = states[-1]
    if r.property == NO_DEADLOCK:
        if reference_successors(system, last):
            return "the final state is no deadlock"
        return None
    if r.property == NO_MODEL_ERROR:
        return None if _fails(system, last) else "no command fails in the final state"
    prop = next(p for p in system.properties if p.name == r.property)
    try:
        bad = bool(evaluate(prop.bad, env_of(system, last)))
    except EvalError:
        bad = True
    return None if bad else "the final state does not violate the property"
