"""The one replay module: every explorer's counterexample paths, lassos, witnesses and saved
traces are re-executed on the concrete semantics here, and the rows a trace shows are made
here. Used by every method (explicit, under, types, fourvalued, symbolic, pdr/kind), by the
component checker (``run_path``, ``deadlock_end``; its rows are its own) and by ``absmc
replay``/``simulate --replay``.

* :func:`replay` — every ``violated`` verdict's trace goes through it: each step of the path
  must be a step of the semantics in the state reached so far, and the final state (or the
  last step) must really violate what the path claims. Raises :class:`ReplayError` otherwise.
* :func:`concretize` — a path of an abstract System, given as the *concrete* command sequence
  of each step, mapped to step labels of the concrete semantics (optionally guided by a
  predicate on the concrete states, e.g. "lies in the abstract state's concretization"). A
  step with no concrete counterpart raises :class:`Unconfirmed` with the step number and why:
  an abstract trace is never silently continued from an old state.
* :func:`replay_lasso` — a lasso (a product path with the start of its cycle) of a
  linear-time property: the system steps on the semantics, the automaton moves by evaluating
  their guards (:func:`absmc.ir.evaluate.evaluate`), the cycle must close and pass an accepting
  automaton state.
* :func:`replay_lasso_rows` — the same for a lasso given only as trace rows (e.g. one that
  came back from another process): the automaton run is searched for, then
  :func:`replay_lasso` checks it.
* :func:`chain_rows` / :func:`run_path` — states along a path, one row per command of a chain.
* :func:`replay_saved` / :func:`replay_violation` — a saved trace (a trail, ``check --json``,
  ``simulate --json``: rows of command texts and states, :mod:`absmc.kernel.replay.trail`) matched
  row by row, then the violation it ends in confirmed as the search confirms it.
* :func:`replay_witness` — a witness of a CTL formula (:mod:`absmc.kernel.replay.witness`): a
  finite run, a lasso or a run into a dead end.
* :func:`replay_path` — a counterexample of a model without IR (the model interface only: the
  component checker's), the same checks as :func:`replay`; the model's owner may say how a
  row and a deadlock look.
* :func:`start_state` / :func:`deadlock_end` — the checks every replay shares: the first row
  is an initial state; a deadlock trace ends where the search counts a deadlock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, cast

from absmc.ir.evaluate import EvalError, env_of, evaluate
from absmc.ir.expr import FALSE
from absmc.ir.ltl import NON_PROGRESS, Automaton, LtlProperty, non_progress_property
from absmc.ir.steps import Failure, State
from absmc.ir.system import NO_DEADLOCK, NO_MODEL_ERROR, System
from absmc.kernel.ltl.product import STUTTER, decode, encode
from absmc.kernel.model.initial import is_initial
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.model.semantics import Semantics, is_step_property
from absmc.kernel.replay.trail import SavedTrace
from absmc.kernel.replay.witness import Witness
from absmc.kernel.run.result import StateValue, Trace, TraceStep

__all__ = [
    "Ending",
    "ReplayError",
    "Unconfirmed",
    "chain_rows",
    "command_row",
    "command_source",
    "command_text",
    "concretize",
    "deadlock_end",
    "failing_step",
    "replay",
    "replay_lasso",
    "replay_lasso_rows",
    "replay_path",
    "replay_rows",
    "replay_saved",
    "replay_trace",
    "replay_violation",
    "replay_witness",
    "run_path",
    "start_state",
    "to_trace",
]


class ReplayError(Exception):
    """A path does not execute on the semantics it was found on or mapped to: raised with the
    step at which it failed. For a path found by a concrete search this is a bug in an engine,
    never a user error."""


class Unconfirmed(ReplayError):
    """An abstract path has no concrete run: ``step`` (1-based) is the first step without a
    concrete counterpart, ``reason`` says why."""

    def __init__(self, step: int, reason: str) -> None:
        super().__init__(f"step {step}: {reason}")
        self.step = step
        self.reason = reason


def command_source(system: System, index: int) -> str | None:
    """``FILE:LINE`` of a command's source, when known."""
    span = system.commands[index].span
    return f"{span.file}:{span.line}" if span is not None else None


def command_text(system: System, index: int) -> str:
    """What a trace shows for a command: its source text when the front end gave one."""
    cmd = system.commands[index]
    return cmd.source_text if cmd.source_text is not None else cmd.text()


def command_row(system: System, k: int, state: State, ci: int, suffix: str = "") -> TraceStep:
    """Trace row ``k``: ``state`` (a concrete state of ``system``) after command ``ci``."""
    cmd = system.commands[ci]
    return TraceStep(
        k,
        system.state_dict(state),
        process=cmd.process,
        command=command_text(system, ci) + suffix,
        source=command_source(system, ci),
        command_index=ci,
    )


def run_path(sem: Semantics, path: Sequence[int], start: State | None = None) -> list[State]:
    """The states visited by executing ``path`` (step labels) from the initial state (or from
    ``start``, one of the initial states of an ``init:`` constraint, which the caller checks:
    :func:`replay`).

    Raises ``ReplayError`` when a label is not among the steps where the path uses it, or
    causes a model error (the caller handles a final failing step separately).
    """
    state = sem.initial if start is None else start
    states = [state]
    for k, ci in enumerate(path, start=1):
        succ, fails = sem.successors(state)
        nxt = next((t for c, t in succ if c == ci), None)
        if nxt is None:
            if any(f.label == ci and f.property == NO_MODEL_ERROR for f in fails):
                raise ReplayError(f"step {k}: command {ci} causes a model error")
            raise ReplayError(f"step {k}: command {ci} is not enabled")
        state = nxt
        states.append(state)
    return states


def chain_rows(sem: Semantics, state: State, commands: Sequence[int]) -> list[tuple[int, State]]:
    """Execute ``commands`` one by one from ``state`` (the commands of one step, a chain);
    ``(command, state after it)`` for each. Raises ``ReplayError`` when one is not enabled."""
    out: list[tuple[int, State]] = []
    for ci in commands:
        nxt, _ = sem.step(ci, state)
        if nxt is None:
            raise ReplayError(f"command {ci} of a chain is not enabled")
        out.append((ci, nxt))
        state = nxt
    return out


def to_trace(
    sem: IRSemantics, states: Sequence[State], path: Sequence[int], note: str | None = None
) -> Trace:
    """The user-facing trace of a replayed run (``len(states) == len(path) + 1``); a chain of
    commands (exclusive control) shows one row per command."""
    return Trace(tuple(_rows(sem, states, path)), replayed=True, note=note)


def _rows(sem: IRSemantics, states: Sequence[State], path: Sequence[int]) -> list[TraceStep]:
    system = sem.system
    steps = [TraceStep(0, system.state_dict(states[0]))]
    for i, label in enumerate(path):
        parts = chain_rows(sem, states[i], sem.commands_of(label))
        if parts[-1][1] != states[i + 1]:
            raise ReplayError(f"step {i + 1}: the chain does not reach the recorded state")
        for ci, st in parts:
            steps.append(command_row(system, len(steps), st, ci))
    return steps


def _failing(sem: IRSemantics, prop: str, path: Sequence[int], start: State | None) -> Trace:
    """Replay a path whose last label fails (a model error or a failed assertion)."""
    system = sem.system
    if not path:
        raise ReplayError("a failing path needs a failing command")
    states = run_path(sem, path[:-1], start)
    cmds = sem.commands_of(path[-1])
    prefix = chain_rows(sem, states[-1], cmds[:-1])
    state = prefix[-1][1] if prefix else states[-1]
    _, fails = sem.step(cmds[-1], state)
    errors = [f.message for f in fails if f.label == cmds[-1] and f.property == prop]
    if not errors:
        raise ReplayError(f"the last command does not violate '{prop}'")
    steps = _rows(sem, states, path[:-1])
    for ci, st in prefix:
        steps.append(command_row(system, len(steps), st, ci))
    cmd = system.commands[cmds[-1]]
    where = command_source(system, cmds[-1])
    note = (
        f"next, {cmd.process} executes '{command_text(system, cmds[-1])}'"
        + (f" ({where})" if where else "")
        + f": {errors[0]}"
    )
    return Trace(tuple(steps), replayed=True, note=note)


def is_failing_property(system: System, prop: str) -> bool:
    """Violations of ``prop`` are steps (model errors, ``assert`` properties), not states."""
    if prop == NO_MODEL_ERROR:
        return True
    if prop == NO_DEADLOCK:
        return False
    return system.get_property(prop).kind == "assert"


def deadlock_end(sem: Semantics, last: State) -> None:
    """Check that ``last`` ends a ``no-deadlock`` trace as the search counts a deadlock: no
    step, no command that is a model error there, not a valid end state. Raises
    ``ReplayError`` otherwise (every explorer's deadlock traces go through it: the component
    checker's too)."""
    succ, fails = sem.successors(last)
    if succ or sem.valid_end(last):
        raise ReplayError("the final state of a deadlock trace has a successor")
    if any(f.property == NO_MODEL_ERROR for f in fails):
        raise ReplayError("in the final state of the deadlock trace a command is a model error")


def replay(sem: IRSemantics, prop: str, path: Sequence[int], start: State | None = None) -> Trace:
    """Replay a counterexample for property ``prop`` on ``sem`` and return its trace (from
    ``sem.initial``, or from ``start`` when given: an initial state of an ``init:`` set).

    * a state property: the final state must violate it;
    * ``no-deadlock``: the final state must have no step, no command that is a model error
      there (the search does not count such a state as a deadlock either), and not be a valid
      end state;
    * ``no-model-error`` and ``assert`` properties: the last label of ``path`` must cause the
      failure in the state before it (the trace ends in that state; ``note`` says what the
      command does wrong).

    Raises ``ReplayError`` when any of this fails.
    """
    if start is not None and not is_initial(sem.system, start):
        raise ReplayError("the start state is not an initial state")
    if is_failing_property(sem.system, prop):
        return _failing(sem, prop, path, start)
    states = run_path(sem, path, start)
    last = states[-1]
    if prop == NO_DEADLOCK:
        deadlock_end(sem, last)
        return to_trace(sem, states, path, "deadlock: no command is enabled in the last state")
    names = [sem.properties[k].name for k in sem.violated(last)]
    if prop not in names:
        raise ReplayError(f"the final state does not violate '{prop}'")
    return to_trace(sem, states, path)


#: how a model shows step ``k`` of a trace: ``row(k, before, after, label)``
RowOf = Callable[[int, State, State, int], TraceStep]


def replay_path(
    sem: Semantics,
    prop: str,
    path: Sequence[int],
    row: RowOf | None = None,
    deadlock_note: Callable[[State], str] | None = None,
) -> Trace:
    """Replay a counterexample of ``prop`` (a path of step labels from ``sem.initial``) on a
    model known only through the model interface (no IR; e.g. a Python component, whose
    replay re-executes the environment's calls) and return its trace:

    * a step property (``is_step_property``: ``assert`` kinds, model errors): the last step must
      report a failure of ``prop``; the trace ends in the state that step leads to (the model's
      ``step`` must give one) and its note is the failure's message;
    * ``no-deadlock``: the final state ends a deadlock as the search counts one
      (:func:`deadlock_end`); the note is ``deadlock_note(state)`` when given;
    * a state property: the final state must violate it.

    Rows: ``TraceStep(0, describe_state(initial))``, then ``row(k, before, after, label)`` per
    step (default: ``describe_state(after)`` with ``describe_step(label)`` as the command).
    Raises ``ReplayError`` when any of this fails (for a component: an environment that
    answered differently)."""
    note: str | None = None
    if is_step_property(sem.properties, prop):
        if not path:
            raise ReplayError("a failing path needs a failing step")
        states = run_path(sem, path[:-1])
        target, fails = sem.step(path[-1], states[-1])
        hits = [f for f in fails if f.property == prop]
        if not hits:
            raise ReplayError(f"the last step does not violate '{prop}'")
        if target is None:
            raise ReplayError("the failing step has no successor")
        states.append(target)
        note = hits[0].message
    else:
        states = run_path(sem, path)
        if prop == NO_DEADLOCK:
            deadlock_end(sem, states[-1])
            note = (
                deadlock_note(states[-1])
                if deadlock_note is not None
                else "deadlock: no step is enabled in the last state"
            )
        elif prop not in [sem.properties[k].name for k in sem.violated(states[-1])]:
            raise ReplayError(f"the final state does not violate '{prop}'")

    def shown(s: State) -> dict[str, StateValue]:
        return cast(dict[str, StateValue], dict(sem.describe_state(s)))

    def plain(k: int, before: State, after: State, label: int) -> TraceStep:
        return TraceStep(k, shown(after), command=sem.describe_step(label), command_index=label)

    make = row if row is not None else plain
    rows = [TraceStep(0, shown(states[0]))]
    rows += [make(k, states[k - 1], states[k], label) for k, label in enumerate(path, start=1)]
    return Trace(tuple(rows), replayed=True, note=note)


def concretize(
    sem: Semantics,
    steps: Sequence[tuple[int, ...]],
    failing: str | None = None,
    fits: Callable[[int, State], bool] | None = None,
    guided: bool = False,
) -> tuple[list[int], str]:
    """Step labels of the concrete ``sem`` for a path given as the concrete command sequence of
    each step (one tuple per step: a chain of exclusive commands is one step).

    ``fits(k, s)`` (optional) must accept the concrete state ``s`` reached after step ``k``
    (``k = 0``: the initial state); e.g. "``s`` lies in the k-th abstract state". With
    ``guided``, a step whose commands have no fitting successor may take *any* successor that
    fits (a must-path of the four-valued method: every represented state has a successor in the
    next abstract state). With ``failing``, the last step fails that property (a model error or
    an assertion; ``guided``: any failure of it) and its failure's label is used.

    Returns the labels and, with ``failing``, the concrete failure's message. Raises
    :class:`Unconfirmed` at the first step without a concrete counterpart.
    """
    s = sem.initial
    if fits is not None and not fits(0, s):
        raise Unconfirmed(0, "the initial state is not in the first abstract state")
    out: list[int] = []
    commands_of = sem.commands_of
    for k, want in enumerate(steps, start=1):
        succ, fails = sem.successors(s)
        if failing is not None and k == len(steps):
            bad: list[Failure] = [f for f in fails if f.property == failing]
            hit = [f for f in bad if commands_of(f.label) == want] or (bad if guided else [])
            if not hit:
                raise Unconfirmed(k, f"the concrete step does not violate '{failing}'")
            out.append(hit[0].label)
            return out, hit[0].message
        same = [(lab, t) for lab, t in succ if commands_of(lab) == want]
        pick = next(((lab, t) for lab, t in same if fits is None or fits(k, t)), None)
        if pick is None and guided and fits is not None:
            pick = next(((lab, t) for lab, t in succ if fits(k, t)), None)
        if pick is None:
            if fits is not None and (same or guided):
                what = "no concrete successor lies in the abstract state"
            elif any(commands_of(f.label) == want for f in fails):
                what = f"the commands {list(want)} cause a model error"
            elif len(want) == 1:
                what = f"command {want[0]} is not enabled"
            else:
                what = f"the chain of commands {list(want)} is not a concrete step"
            raise Unconfirmed(k, what)
        out.append(pick[0])
        s = pick[1]
    return out, ""


def _matching_step(
    sem: IRSemantics, rows: Sequence[TraceStep], i: int, succ: Sequence[tuple[int, State]]
) -> tuple[int, State, int] | None:
    """The step among ``succ`` whose chain of commands is rows ``i``... (their
    ``command_index``) and reaches the state of its last row: ``(label, target, next row)``."""
    system = sem.system
    for label, target in succ:
        cmds = sem.commands_of(label)
        part = rows[i : i + len(cmds)]
        same = len(part) == len(cmds) and [r.command_index for r in part] == list(cmds)
        if same and dict(part[-1].state) == system.state_dict(target):
            return label, target, i + len(cmds)
    return None


def replay_trace(sem: IRSemantics, prop: str, trace: Trace) -> Trace:
    """Replay a reported counterexample ``trace`` of ``prop`` once more on ``sem`` (e.g. one
    that came back from another process): its rows (``command_index`` and state of each) are
    matched step by step with the successors of ``sem`` (a chain of exclusive commands covers
    several rows), then the path is checked by :func:`replay`. Returns the replayed trace.
    Raises ``ReplayError`` where a row has no matching step or the path does not violate
    ``prop``."""
    rows = list(trace.steps)
    if not rows or any(r.command_index is None for r in rows[1:]):
        raise ReplayError("the trace does not name its commands")
    system = sem.system
    state = _trace_start(sem, trace)
    # any state of an init: set may start it; replay() is told which
    start = state if system.init_constraint is not None else None
    path: list[int] = []
    i = 1
    while i < len(rows):
        step = _matching_step(sem, rows, i, sem.successors(state)[0])
        if step is None:
            break
        label, state, i = step
        path.append(label)
    if is_failing_property(system, prop):
        # the rows left are the head of the failing chain; the failing step is not a row
        rest = [r.command_index for r in rows[i:]]
        _, fails = sem.successors(state)
        hit = [
            f.label
            for f in fails
            if f.property == prop and list(sem.commands_of(f.label)[:-1]) == rest
        ]
        if not hit:
            raise ReplayError(f"row {i}: no step of the semantics fails '{prop}' here")
        path.append(hit[0])
    elif i < len(rows):
        raise ReplayError(f"row {i}: no step of the semantics matches the trace")
    return replay(sem, prop, path, start)


#: what a trace shows for a stutter step
STUTTER_TEXT = "(stutter: the terminal state repeats)"


def _guard_holds(guard: Any, env: Mapping[str, Any]) -> bool:
    """An automaton edge's guard in a state's environment (an evaluation error: false)."""
    try:
        return bool(evaluate(guard, env))
    except (EvalError, ZeroDivisionError):
        return False


def _edge_ok(system: System, aut: Automaton, q: int, target: int, state: State) -> bool:
    env = env_of(system, state)
    return any(e.target == target and _guard_holds(e.guard, env) for e in aut.edges[q])


def replay_lasso(
    sem: IRSemantics,
    aut: Automaton,
    path: Sequence[int],
    cycle_start: int,
    note: str,
    weakly_fair: bool = False,
    start: State | None = None,
) -> Trace:
    """Replay a lasso of the product of ``sem`` with ``aut`` (labels of
    :mod:`absmc.kernel.ltl.product`; ``cycle_start`` indexes the path's states) and return its
    trace, ``Trace.cycle_start`` set to the row where the cycle starts.

    Checks, raising ``ReplayError`` otherwise: every system step is a step of ``sem`` (a stutter
    step only in a terminal valid end state), every automaton move is an edge whose guard holds
    in the state it leaves, the last product state equals the one at ``cycle_start``, and the
    cycle passes an accepting automaton state; with ``weakly_fair``, also that every process
    executes or is blocked somewhere on the cycle (SPIN's weak fairness). ``start``: the
    initial state (default ``sem.initial``; one of an ``init:`` set)."""
    system = sem.system
    size = aut.size
    if not 0 <= cycle_start < len(path):
        raise ReplayError(f"cycle start {cycle_start} outside the path of {len(path)} steps")
    s, q = (sem.initial if start is None else start), aut.initial
    prod: list[tuple[State, int]] = [(s, q)]
    steps = [TraceStep(0, system.state_dict(s))]
    row_of = [0]
    fair: list[set[str]] = []  # per step: processes that execute or are blocked
    procs = {p.name for p in system.processes}
    for k, label in enumerate(path, start=1):
        ci, target = decode(label, size)
        if not _edge_ok(system, aut, q, target, s):
            raise ReplayError(f"step {k}: the automaton has no edge {q} -> {target} here")
        succ, _ = sem.successors(s)
        enabled = {system.commands[c].process for lab, _ in succ for c in sem.commands_of(lab)}
        moved = (
            set() if ci == STUTTER else {system.commands[c].process for c in sem.commands_of(ci)}
        )
        fair.append((procs - enabled) | moved)
        if ci == STUTTER:
            if succ:
                raise ReplayError(f"step {k}: a stutter step in a state that is not terminal")
            steps.append(TraceStep(len(steps), system.state_dict(s), command=STUTTER_TEXT))
        else:
            nxt = next((t for c, t in succ if c == ci), None)
            if nxt is None:
                raise ReplayError(f"step {k}: command {ci} is not enabled")
            for cj, st in chain_rows(sem, s, sem.commands_of(ci)):
                steps.append(command_row(system, len(steps), st, cj))
            if steps[-1].state != system.state_dict(nxt):
                raise ReplayError(f"step {k}: the chain does not reach the recorded state")
            s = nxt
        q = target
        prod.append((s, q))
        row_of.append(len(steps) - 1)
    if prod[-1] != prod[cycle_start]:
        raise ReplayError("the lasso's last state is not the state where its cycle starts")
    if not any(qq in aut.accepting for _, qq in prod[cycle_start:-1]):
        raise ReplayError("the cycle passes no accepting state of the automaton")
    if weakly_fair:
        served = set().union(*fair[cycle_start:])
        if served != procs:
            who = ", ".join(sorted(procs - served))
            raise ReplayError(f"the cycle is not weakly fair to {who}")
    return Trace(tuple(steps), replayed=True, note=note, cycle_start=row_of[cycle_start])


def _trace_start(sem: IRSemantics, trace: Trace) -> State:
    """The initial state a trace starts in (:func:`start_state` of its first row)."""
    return start_state(sem, trace.steps[0].state)


def start_state(sem: IRSemantics, first: Mapping[str, Any]) -> State:
    """The initial state a trace's first row (``first``: variable -> value) shows: the
    model's, or one of its ``init:`` set. Raises ``ReplayError`` when the row is neither."""
    system = sem.system
    s = sem.initial
    if system.init_constraint is not None:  # any state of the init: set may start it
        try:
            s = tuple(int(first[v.name]) for v in system.variables)
        except (KeyError, TypeError, ValueError):
            raise ReplayError("row 0: the trace does not give the initial state") from None
        if not is_initial(system, s):
            raise ReplayError("row 0: the first state is not an initial state of the model")
    if dict(first) != system.state_dict(s):
        raise ReplayError("row 0: the initial state differs from the model's")
    return s


def replay_rows(sem: IRSemantics, trace: Trace) -> tuple[list[int], list[State], int | None]:
    """Group a trace's rows into steps of ``sem`` (labels, or STUTTER for a stutter row of a
    terminal state): the labels, the states before each step and after the last, and, for a
    lasso (``trace.cycle_start``), the step where the cycle starts, whose state must be the
    last one. Raises ``ReplayError`` where the rows do not match."""
    rows = list(trace.steps)
    if not rows:
        raise ReplayError("the trace has no rows")
    s = _trace_start(sem, trace)
    labels: list[int] = []
    states: list[State] = [s]
    step_at_row = {0: 0}
    i = 1
    while i < len(rows):
        succ, _ = sem.successors(s)
        if rows[i].command == STUTTER_TEXT:
            if succ:
                raise ReplayError(f"row {i}: a stutter step in a state that is not terminal")
            labels.append(STUTTER)
            i += 1
        else:
            step = _matching_step(sem, rows, i, succ)
            if step is None:
                raise ReplayError(f"row {i}: no step of the semantics matches the trace")
            label, s, i = step
            labels.append(label)
        states.append(s)
        step_at_row[i - 1] = len(labels)
    if trace.cycle_start is None:
        return labels, states, None
    start = step_at_row.get(trace.cycle_start)
    if start is None or start >= len(labels):
        raise ReplayError(f"the cycle start (row {trace.cycle_start}) is not a step boundary")
    if states[-1] != states[start]:
        raise ReplayError("the lasso's last state is not the state where its cycle starts")
    return labels, states, start


def replay_lasso_rows(sem: IRSemantics, aut: Automaton, trace: Trace, weakly_fair: bool) -> Trace:
    """Replay a lasso given as trace rows (``command_index`` and state per row, stutter rows,
    ``cycle_start``): group the rows into steps of ``sem``, search the product of the lasso's
    ultimately periodic word with ``aut`` for an accepting run (the cycle may have to be
    unrolled a few times before the automaton closes it too), and check that product lasso
    with :func:`replay_lasso`. Returns the replayed trace; raises ``ReplayError`` when the
    rows do not replay or the word is not accepted (then it does not violate the property)."""
    labels, states, c = replay_rows(sem, trace)
    if c is None:
        raise ReplayError("the trace is not a lasso (no cycle start)")
    n = len(labels)
    system = sem.system
    envs = [env_of(system, st) for st in states[:n]]
    Node = tuple[int, int]  # (position in the lasso, automaton state)
    succ: dict[Node, list[Node]] = {}

    def nxt(node: Node) -> list[Node]:
        got = succ.get(node)
        if got is None:
            i, q = node
            j = i + 1 if i + 1 < n else c
            ok = {e.target for e in aut.edges[q] if _guard_holds(e.guard, envs[i])}
            targets = dict.fromkeys(e.target for e in aut.edges[q] if e.target in ok)
            got = succ[node] = [(j, t) for t in targets]
        return got

    def back(parent: Mapping[Node, Node | None], node: Node) -> list[Node]:
        out = [node]
        while (p := parent[out[-1]]) is not None:
            out.append(p)
        return out[::-1]

    def cycle(v: Node) -> list[Node] | None:
        """A shortest path from ``v`` back to ``v`` (BFS), or None."""
        parent: dict[Node, Node | None] = {v: None}
        todo = [v]
        while todo:
            node = todo.pop(0)
            for m in nxt(node):
                if m == v:
                    return [*back(parent, node), v]
                if m not in parent:
                    parent[m] = node
                    todo.append(m)
        return None

    start = (0, aut.initial)
    reached: dict[Node, Node | None] = {start: None}  # every reachable node, its BFS parent
    todo = [start]
    while todo:
        node = todo.pop(0)
        for m in nxt(node):
            if m not in reached:
                reached[m] = node
                todo.append(m)
    for v in sorted(reached):
        if v[1] not in aut.accepting:
            continue
        loop = cycle(v)
        if loop is None:
            continue
        nodes = [*back(reached, v), *loop[1:]]
        stem_end = len(nodes) - len(loop)
        plabels = [encode(labels[a[0]], b[1], aut.size) for a, b in pairwise(nodes)]
        note = trace.note or ""
        return replay_lasso(sem, aut, plabels, stem_end, note, weakly_fair, states[0])
    raise ReplayError("the automaton of the property's negation accepts no run of this lasso")


def replay_saved(
    sem: IRSemantics, rows: Sequence[Mapping[str, Any]], cycle_start: int | None = None
) -> Trace:
    """Re-execute a saved trace (the ``trace`` rows of a JSON result: ``state`` maps and
    ``command`` texts, one row per command) on ``sem``: each row must be a command of the
    semantics (or a stutter step of a terminal state) leading to exactly the recorded state;
    with ``cycle_start``, the last state must equal that row's state (a lasso). Returns the
    trace (replayed); raises ``ReplayError`` at the first row that does not replay."""
    system = sem.system
    if not rows:
        raise ReplayError("the trace has no rows")
    s = start_state(sem, dict(rows[0].get("state", {})))
    steps = [TraceStep(0, system.state_dict(s))]
    for k, row in enumerate(rows[1:], start=1):
        want = dict(row.get("state", {}))
        text = row.get("command")
        if text == STUTTER_TEXT:
            if sem.successors(s)[0] or want != system.state_dict(s):
                raise ReplayError(f"row {k}: a stutter step in a state that is not terminal")
            steps.append(TraceStep(k, want, command=STUTTER_TEXT))
            continue
        for ci in range(len(system.commands)):
            if command_text(system, ci) != text:
                continue
            t, _ = sem.step(ci, s)
            if t is not None and system.state_dict(t) == want:
                steps.append(command_row(system, k, t, ci))
                s = t
                break
        else:
            raise ReplayError(f"row {k}: no command '{text}' reaches the recorded state")
    if cycle_start is not None and (
        not 0 <= cycle_start < len(steps) or steps[cycle_start].state != steps[-1].state
    ):
        raise ReplayError(f"the last state is not the state of row {cycle_start}")
    return Trace(tuple(steps), replayed=True, cycle_start=cycle_start)


# -- saved traces (trails, check/simulate JSON): the violation they end in ------------------
@dataclass(frozen=True)
class Ending:
    """How a replayed trace ends: the ``trace`` (replayed), the ``violation`` it shows (one
    sentence; ``None`` when it shows none), and for a failed assertion or a model error the
    ``failing`` command (its index) that the last state executes next."""

    trace: Trace
    violation: str | None
    failing: int | None = None


def _ltl_property(sem: IRSemantics, name: str) -> LtlProperty | None:
    found = next((p for p in sem.system.ltl if p.name == name), None)
    if found is None and name == NON_PROGRESS:
        return non_progress_property(FALSE)
    return found


def failing_step(
    sem: IRSemantics, trace: Trace, prop: str, note: str | None = None
) -> tuple[int, str] | None:
    """The command that fails ``prop`` (an assertion or ``no-model-error``) in the last state
    of ``trace`` and its message: ``(command index, message)``, or ``None``. Where several
    commands fail it there (model errors of two processes), the one whose text ``note`` (the
    saved trace's note on its last step) names is preferred."""
    if not trace.steps:
        return None
    system = sem.system
    state = tuple(int(trace.steps[-1].state[v.name]) for v in system.variables)
    found: list[tuple[int, str]] = []
    for ci in range(len(system.commands)):
        _, fails = sem.step(ci, state)
        found += [(ci, f.message) for f in fails if f.property == prop]
    named = [x for x in found if note and f"'{command_text(system, x[0])}'" in note]
    best = named or found
    return best[0] if best else None


def replay_violation(sem: IRSemantics, saved: SavedTrace, weakly_fair: bool = False) -> Ending:
    """Replay ``saved`` on ``sem`` (a compiled System with all its properties) and confirm the
    violation it ends in (module docstring). Rows are matched by command text and state
    (:func:`~absmc.kernel.replay.trace.replay_saved`); then the violation is checked as the search
    checks it (:func:`~absmc.kernel.replay.trace.replay_trace`; for a linear-time property
    :func:`~absmc.kernel.replay.trace.replay_lasso_rows` with the property's automaton, Spot's
    translation of its negation). Raises ``ReplayError`` at the first row that differs or when
    the end is not a violation of ``saved.property``."""
    system = sem.system
    rows = replay_saved(sem, saved.rows, saved.cycle_start)
    prop = saved.property
    if prop is None:
        return Ending(rows, None)
    ltl = _ltl_property(sem, prop)
    if ltl is not None:
        from absmc.kernel.ltl.ltl import automaton_of

        done = replay_lasso_rows(sem, automaton_of(ltl), rows, weakly_fair)
        c = done.cycle_start
        return Ending(
            done,
            f"the steps from step {c} on repeat forever: an accepting run of the violation "
            f"automaton of '{prop}'",
        )
    if any(p.name == prop for p in system.ctl):
        replay_rows(sem, rows)
        return Ending(
            rows,
            f"the run is the witness that '{prop}' fails (replayed; the formula is not "
            "rechecked along it)",
        )
    if is_failing_property(system, prop):
        try:
            done = replay_trace(sem, prop, rows)
        except ReplayError:
            if len(rows.steps) < 2:
                raise
            # a random run keeps the assertion's own step: its last row is the failing command
            head = Trace(rows.steps[:-1], replayed=True)
            done = replay_trace(sem, prop, head)
        hit = failing_step(sem, done, prop, saved.note or done.note)
        if hit is None:  # replay_trace found it: the search's failure is a chain's last command
            return Ending(done, done.note or f"'{prop}' is violated by the next step")
        ci, message = hit
        cmd = system.commands[ci]
        where = command_source(system, ci)
        what = "model error: " if prop == NO_MODEL_ERROR else ""
        text = f"{cmd.process} executes '{command_text(system, ci)}'" + (
            f" ({where})" if where else ""
        )
        return Ending(done, f"{what}step {len(done.steps)}: {text}: {message}", ci)
    done = replay_trace(sem, prop, rows)
    n = len(done.steps) - 1
    if prop == NO_DEADLOCK:
        return Ending(done, f"deadlock: no command is enabled in the state of step {n}")
    kind = system.get_property(prop).kind
    return Ending(done, f"the state of step {n} violates {kind} '{prop}'")


# -- witnesses of CTL formulas (absmc.kernel.replay.witness) ------------------------------------
def replay_witness(sem: IRSemantics, w: Witness, what: str) -> Trace:
    """Re-execute a witness (:class:`absmc.kernel.replay.witness.Witness`) on ``sem`` from its start
    state: every step must be a step of the semantics (:func:`run_path`); a lasso's last state
    must equal its loop state; a dead end must have no successor. Returns the trace (its
    ``note`` says how the run continues). Raises ``ReplayError`` otherwise."""
    if not is_initial(sem.system, w.start):
        raise ReplayError("the witness does not start in an initial state")
    states = run_path(sem, w.labels, w.start)
    s = states[-1]
    if w.loop is not None:
        if states[w.loop] != states[-1]:
            raise ReplayError("the lasso does not close")
        note = f"{what}: from step {len(states) - 1} the run repeats steps {w.loop + 1}..."
        if w.loop == len(states) - 1:
            note = f"{what}: the last state loops to itself"
    elif w.dead:
        steps, _ = sem.successors(s)
        if steps:
            raise ReplayError("the last state of a dead-end witness has a successor")
        note = f"{what}: the last state has no successor (it stays there forever)"
    else:
        note = f"{what}: a finite prefix shows the violation"
    return to_trace(sem, states, list(w.labels), note)
