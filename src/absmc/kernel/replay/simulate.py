"""Random simulation: one run of the concrete semantics, choosing among enabled commands with a
seeded random generator (SPIN's ``spin -n SEED`` random simulation)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from absmc.codegen.python import compile_system
from absmc.ir.evaluate import EvalError, env_of, evaluate
from absmc.ir.intsem import IntegerTooLarge
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, Print, System
from absmc.kernel.replay.trace import chain_rows, command_text, to_trace
from absmc.kernel.run.result import Trace


@dataclass(frozen=True)
class SimulationRun:
    """The simulated run and why it ended (``ending``: a sentence). ``steps`` counts the steps
    taken (an atomic chain is one step; the trace shows one row per command, so it may have
    more rows); ``violated`` names the property the run violated (an assertion, a model error,
    an invariant), if any; ``interrupted`` is true when Ctrl-C ended the run (the trace so far
    is kept)."""

    trace: Trace
    ending: str
    seed: int
    steps: int = 0
    violated: str | None = None
    interrupted: bool = False
    output: str = ""


_SPEC = re.compile(r"%([-+ 0#]*)(\d*)([diuxXocse%])")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "r": "\r"}


def render_print(pr: Print, env: dict[str, int]) -> str:
    """The text SPIN's simulator writes for ``pr`` in a state (``env``: variable -> value):
    ``%d %i %u %x %X %o %c`` with flags and width as C's printf, ``%e`` an mtype name
    (``printm``), ``%%``, and the escapes ``\\n \\t \\r \\\\ \\"``. An argument that is a
    model error (e.g. a division by zero) prints as ``?``; missing arguments print nothing."""
    fmt = pr.format
    if len(fmt) >= 2 and fmt[0] == fmt[-1] == '"':
        fmt = fmt[1:-1]
    fmt = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), fmt)
    names = dict(pr.names)
    args = iter(pr.args)

    def one(m: re.Match[str]) -> str:
        flags, width, conv = m.groups()
        if conv == "%":
            return "%"
        arg = next(args, None)
        if arg is None:
            return ""
        try:
            v = evaluate(arg, env)
        except EvalError:
            return "?"
        if conv == "e":
            return names.get(v, str(v))
        if conv == "c":
            return chr(v & 0xFF)
        if conv in "ux":
            conv = "d" if conv == "u" else "x"
            v &= 0xFFFFFFFF
        spec = f"%{flags}{width}{'d' if conv in 'is' else conv}"
        return spec % v

    return _SPEC.sub(one, fmt)


def simulate(
    system: System,
    steps: int = 100,
    seed: int | None = None,
    on_output: Callable[[str], None] | None = None,
) -> SimulationRun:
    """Run at most ``steps`` random steps from the initial state.

    Ends early at a deadlock (or valid end state), at a model error (the trace ends before the
    failing command; ``ending`` names it), when a property of the model is violated
    (``violated`` names it: a deadlock counts as ``no-deadlock``), or at Ctrl-C
    (``interrupted``; the run so far is returned).
    ``seed`` defaults to a random one, reported in the result for reproduction. The output of
    the commands executed (``Command.prints``: Promela's ``printf``) is collected in
    ``output`` and passed to ``on_output`` as it is written.
    """
    if seed is None:
        seed = random.randrange(1 << 31)
    rng = random.Random(seed)
    compiled = compile_system(system)
    state = compiled.initial
    states = [state]
    path: list[int] = []
    ending = f"stopped after {steps} step{'s' if steps != 1 else ''} (the step bound)"
    violated: str | None = None
    interrupted = False
    written: list[str] = []
    printing = any(c.prints for c in system.commands)

    def write(ci: int, state: tuple[int, ...]) -> None:
        """The output of the commands of step ``ci`` (a chain runs command by command)."""
        before = state
        for c, after in chain_rows(compiled, state, compiled.commands_of(ci)):
            prints = system.commands[c].prints
            if prints:
                env = env_of(system, before)
                text = "".join(render_print(pr, env) for pr in prints)
                written.append(text)
                if on_output is not None:
                    on_output(text)
            before = after

    bad = [compiled.properties[k].name for k in compiled.violated(state)]
    if bad:
        ending = f"property '{bad[0]}' is violated in the initial state"
        violated = bad[0]
    else:
        try:
            for _ in range(steps):
                succ, errors = compiled.successors(state)
                choices: list[tuple[int, tuple[int, ...] | None]] = [(c, t) for c, t in succ]
                choices += [(c, None) for c, _, p in errors if p == NO_MODEL_ERROR]
                if not choices:
                    if compiled.valid_end(state):
                        ending = "valid end state reached"
                    else:
                        ending = "deadlock: no command is enabled"
                        violated = NO_DEADLOCK
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
                    violated = NO_MODEL_ERROR
                    break
                if printing:
                    write(ci, state)
                state = nxt
                states.append(state)
                path.append(ci)
                if failed:
                    ending = f"property '{failed[0][1]}' is violated ({failed[0][0]})"
                    violated = failed[0][1]
                    break
                bad = [compiled.properties[k].name for k in compiled.violated(state)]
                if bad:
                    ending = f"property '{bad[0]}' is violated"
                    violated = bad[0]
                    break
        except KeyboardInterrupt:
            ending = f"interrupted by the user after {len(path)} steps"
            interrupted = True
        except IntegerTooLarge as err:
            ending = f"stopped after {len(path)} steps: {err}"
    trace = to_trace(compiled, states, path)
    return SimulationRun(trace, ending, seed, len(path), violated, interrupted, "".join(written))
