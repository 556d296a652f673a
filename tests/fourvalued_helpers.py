"""Helpers for the four-valued tests: scaling a model's bound and re-executing a trace on the
tree-walking reference semantics (independently of the compiled replay)."""

from __future__ import annotations

from dataclasses import replace

from absmc.ir.evaluate import EvalError, env_of, evaluate, execute, reference_steps
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, System
from absmc.kernel.run.result import Trace


def with_initial(system: System, name: str, value: int) -> System:
    """``system`` with variable ``name`` starting at ``value`` (e.g. the bound MAX)."""
    return system.with_(
        variables=tuple(replace(v, init=value) if v.name == name else v for v in system.variables)
    )


def reexecute(system: System, trace: Trace, prop: str) -> None:
    """Assert that ``trace`` is a run of ``system`` from its initial state that violates
    ``prop``, using :mod:`absmc.ir.evaluate` only (each row of the trace is one command; a
    failing transition ends the trace in the state before the failing command)."""
    state = system.initial_state()
    assert system.state_dict(state) == trace.steps[0].state
    for step in trace.steps[1:]:
        assert step.command_index is not None
        nxt = execute(system, system.commands[step.command_index], state)
        assert nxt is not None, f"step {step.step}: command not enabled"
        assert system.state_dict(nxt) == step.state
        state = nxt
    if prop == NO_MODEL_ERROR:
        failing = [c for c in system.commands if _fails(system, c.index, state)]
        assert failing, "no command fails in the last state"
    elif prop == NO_DEADLOCK:
        # the reference semantics of one search step (timeout, exclusive chains)
        successors, errors = reference_steps(system, state)
        assert not successors and not any(p == NO_MODEL_ERROR for _, p in errors)
        end = system.valid_end
        assert end is None or not evaluate(end, env_of(system, state))
    elif system.get_property(prop).kind == "assert":
        env = env_of(system, state)
        assert any(
            not _fails(system, c.index, state)
            and execute(system, c, state) is not None
            and not evaluate(cond, env)
            for c in system.commands
            for name, cond in c.asserts
            if name == prop
        ), f"no command violates {prop} in the last state"
    else:
        p = system.get_property(prop)
        assert evaluate(p.bad, env_of(system, state))


def _fails(system: System, index: int, state: tuple[int, ...]) -> bool:
    command = system.commands[index]
    env = env_of(system, state)
    try:
        if any(evaluate(cond, env) for cond, _ in command.errors):
            return True
        execute(system, command, state)
    except EvalError:
        return True
    return False
