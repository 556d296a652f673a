"""The reference semantics of a System: the model interface
(:class:`absmc.kernel.model.semantics.Semantics`) by tree-walking evaluation with
:mod:`absmc.ir.evaluate` — slow, obviously right: the definition the compiled back ends
(:mod:`absmc.codegen.python`, :mod:`absmc.native.semantics`) are tested against by one
conformance suite (``tests/test_semantics_conformance.py``) on random Systems: the same steps
(as command sequences, chains included), the same failures, the same property and end-state
answers in every reachable state.
"""

from __future__ import annotations

from absmc.codegen.python import describe_commands
from absmc.ir.dependency import group_dependencies
from absmc.ir.evaluate import EvalError, env_of, evaluate, execute
from absmc.ir.steps import NO_FAILURES, Expansion, Failure, Failures, GroupDeps, State, Successors
from absmc.ir.system import NO_MODEL_ERROR, STATE_PROPERTY_KINDS, Command, Property, System

__all__ = ["ReferenceSemantics"]


class ReferenceSemantics:
    """The reference implementation of the model interface
    (:class:`~absmc.kernel.model.semantics.Semantics`) by tree-walking evaluation
    (:func:`absmc.ir.evaluate.execute`); too slow for search, the definition for tests.

    ``properties`` selects the checked properties (default: all of the System's). Chain labels
    are interned as in the compiled back end (numbers may differ; compare chains with
    :meth:`commands_of`). Messages of failures are not part of the contract, their labels and
    properties are.
    """

    def __init__(self, system: System, properties: tuple[Property, ...] | None = None) -> None:
        self._system = system
        self._properties = system.properties if properties is None else tuple(properties)
        self._chains: list[tuple[int, ...]] = []
        self._chain_ids: dict[tuple[int, ...], int] = {}
        self._asserts = {p.name for p in self._properties if p.kind == "assert"}
        self._deps: tuple[GroupDeps, ...] | None = None

    @property
    def system(self) -> System:
        return self._system

    @property
    def properties(self) -> tuple[Property, ...]:
        return self._properties

    @property
    def state_checks(self) -> bool:
        return any(p.kind in STATE_PROPERTY_KINDS for p in self._properties)

    @property
    def initial(self) -> State:
        return self._system.initial_state()

    def initial_states(self) -> list[State]:
        return [self._system.initial_state()]

    def commands_of(self, label: int) -> tuple[int, ...]:
        n = len(self._system.commands)
        return (label,) if label < n else self._chains[label - n]

    def describe_state(self, s: State) -> dict[str, int | bool]:
        return self._system.state_dict(s)

    def describe_step(self, label: int) -> str:
        return describe_commands(self._system, self.commands_of(label))

    @property
    def dependencies(self) -> tuple[GroupDeps, ...]:
        if self._deps is None:
            self._deps = group_dependencies(self._system)
        return self._deps

    def _intern(self, chain: tuple[int, ...]) -> int:
        if len(chain) == 1:
            return chain[0]
        k = self._chain_ids.get(chain)
        if k is None:
            k = self._chain_ids[chain] = len(self._system.commands) + len(self._chains)
            self._chains.append(chain)
        return k

    def _one(self, c: Command, s: State) -> tuple[State | None, Failures]:
        """One command: its successor (or ``None``) and failures, by the reference evaluator."""
        env = env_of(self._system, s)
        try:
            for cond, msg in c.errors:
                if evaluate(cond, env):
                    return None, (Failure(c.index, msg, NO_MODEL_ERROR),)
            nxt = execute(self._system, c, s)
        except (EvalError, ZeroDivisionError) as err:
            return None, (Failure(c.index, str(err), NO_MODEL_ERROR),)
        if nxt is None:
            return None, NO_FAILURES
        failed: list[Failure] = []
        for prop, cond in c.asserts:
            if prop not in self._asserts:
                continue
            try:
                holds = evaluate(cond, env)
            except (EvalError, ZeroDivisionError):
                holds = 0
            if not holds:
                failed.append(Failure(c.index, "assertion violated", prop))
        return nxt, tuple(failed)

    def step(self, ci: int, s: State) -> tuple[State | None, Failures]:
        return self._one(self._system.commands[ci], s)

    def _layer(self, s: State, commands: list[Command]) -> tuple[Successors, Failures]:
        succ: Successors = []
        fails: Failures = NO_FAILURES
        for c in commands:
            t, f = self._one(c, s)
            fails += f
            if t is not None:
                succ.append((c.index, t))
        return succ, fails

    def successors(self, s: State) -> Expansion:
        cmds = self._system.commands
        normal = [c for c in cmds if "timeout" not in c.flags]
        first, fails = self._layer(s, normal)
        if not first:
            timeout = [c for c in cmds if "timeout" in c.flags]
            if timeout:
                first, more = self._layer(s, timeout)
                fails += more
        out: Successors = []
        for ci, t in first:
            owner = cmds[ci].exclusive
            if owner is None:
                out.append((ci, t))
                continue
            # follow exclusive control: one step per maximal chain (module doc of codegen.python)
            stack: list[tuple[tuple[int, ...], State, str]] = [((ci,), t, owner)]
            seen = {(t, owner)}
            while stack:
                ch, st, who = stack.pop()
                # inside a chain only the holder's non-timeout commands are tried
                mine = [c for c in normal if c.process == who]
                nxt, f = self._layer(st, mine)
                fails += tuple(
                    Failure(self._intern((*ch, e.label)), e.message, e.property) for e in f
                )
                if not nxt:
                    out.append((self._intern(ch), st))
                    continue
                for cj, t2 in reversed(nxt):
                    w2 = cmds[cj].exclusive
                    if w2 is None:
                        out.append((self._intern((*ch, cj)), t2))
                    elif (t2, w2) not in seen:
                        seen.add((t2, w2))
                        stack.append(((*ch, cj), t2, w2))
        return out, fails

    def _state_props(self) -> list[tuple[int, Property]]:
        return [(k, p) for k, p in enumerate(self._properties) if p.kind in STATE_PROPERTY_KINDS]

    def violated(self, s: State) -> list[int]:
        env = env_of(self._system, s)
        out: list[int] = []
        for k, p in self._state_props():
            try:
                value = bool(evaluate(p.expr, env))
            except (EvalError, ZeroDivisionError):
                out.append(k)
                continue
            if value != (p.kind == "invariant"):
                out.append(k)
        return out

    def ok(self, s: State) -> bool:
        return not self.violated(s)

    def valid_end(self, s: State) -> bool:
        ve = self._system.valid_end
        if ve is None:
            return False
        try:
            return bool(evaluate(ve, env_of(self._system, s)))
        except (EvalError, ZeroDivisionError):
            return False
