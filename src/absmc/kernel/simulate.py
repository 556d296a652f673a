"""Random simulation: one run of the concrete semantics, choosing among enabled commands with a
seeded random generator (SPIN's ``spin -n SEED`` random simulation)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from absmc.ir.compile import compile_system
from absmc.ir.system import NO_MODEL_ERROR, System
from absmc.kernel.result import Trace
from absmc.kernel.trace import command_text, to_trace


@dataclass
class SimulationRun:
    """The simulated run and why it ended (``ending``: a sentence)."""

    trace: Trace
    ending: str
    seed: int


def simulate(system: System, steps: int = 100, seed: int | None = None) -> SimulationRun:
    """Run at most ``steps`` random steps from the initial state.

    Ends early at a deadlock (or valid end state), at a model error (the trace ends before the
    failing command; ``ending`` names it) or when a property of the model is violated.
    ``seed`` defaults to a random one, reported in the result for reproduction.
    """
    if seed is None:
        seed = random.randrange(1 << 31)
    rng = random.Random(seed)
    compiled = compile_system(system)
    state = compiled.initial
    states = [state]
    path: list[int] = []
    ending = f"stopped after {steps} steps"
    bad = [compiled.properties[k].name for k in compiled.violated(state)]
    if bad:
        ending = f"property '{bad[0]}' is violated in the initial state"
    else:
        for _ in range(steps):
            succ, errors = compiled.successors(state)
            choices: list[tuple[int, tuple[int, ...] | None]] = [(c, t) for c, t in succ]
            choices += [(c, None) for c, _, p in errors if p == NO_MODEL_ERROR]
            if not choices:
                ending = (
                    "valid end state reached"
                    if compiled.valid_end(state)
                    else "deadlock: no command is enabled"
                )
                break
            ci, nxt = rng.choice(choices)
            failed = [(m, p) for c, m, p in errors if c == ci and p != NO_MODEL_ERROR]
            if nxt is None:
                msg = next(m for c, m, p in errors if c == ci)
                last = compiled.commands_of(ci)[-1]
                cmd = system.commands[last]
                ending = (
                    f"model error: {cmd.process} executes '{command_text(system, last)}': {msg}"
                )
                break
            state = nxt
            states.append(state)
            path.append(ci)
            if failed:
                ending = f"property '{failed[0][1]}' is violated ({failed[0][0]})"
                break
            bad = [compiled.properties[k].name for k in compiled.violated(state)]
            if bad:
                ending = f"property '{bad[0]}' is violated"
                break
    return SimulationRun(to_trace(compiled, states, path), ending, seed)
