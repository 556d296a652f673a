"""``NativeSemantics``: the kernel's ``Semantics`` protocol on generated C (see
:mod:`absmc.native.cgen` for the semantics and :mod:`absmc.native.build` for compilation).

Each call converts the state tuple to an ``int64_t`` array (several slots for a value wider than
64 bits: :meth:`~absmc.native.cgen.Layout.to_slots`), runs the C function and reads the results
back. When a value leaves the 64-bit range (unbounded ``INT`` data) or a state passed in
does not fit its variables' ranges, the call is answered by the generated-Python back end
(:func:`absmc.codegen.python.compile_system`, built on first need) — so answers never differ from
the Python back end's; ``fallbacks`` counts such calls.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from absmc.codegen.python import CompiledSystem, compile_system, describe_commands
from absmc.ir.dependency import group_dependencies
from absmc.ir.steps import Expansion, Failure, Failures, GroupDeps, State, Successors
from absmc.ir.system import NO_MODEL_ERROR, STATE_PROPERTY_KINDS, Property, System
from absmc.native.build import default_opt, ffi, load_library, runtime_sources
from absmc.native.cgen import CGen, Layout

__all__ = ["NativeSemantics", "failure_message"]


def failure_message(
    system: System, props: Sequence[Property], ci: int, kind: int, a: int, b: int
) -> tuple[str, str]:
    """``(message, property)`` of a native failure record (kinds: :mod:`absmc.native.cgen`),
    worded as the Python back end words them."""
    if kind == 1:
        return system.commands[ci].errors[a][1], NO_MODEL_ERROR
    if kind == 2:
        return "division by zero", NO_MODEL_ERROR
    if kind == 3:
        p = props[a]
        # the failing process's instance of the assertion (the command's), as in Python
        cond = next((e for n, e in system.commands[ci].asserts if n == p.name), p.expr)
        return "assertion violated: " + p.shown(cond), p.name
    var = system.variables[a]
    lo, hi = getattr(var.sort, "lo", 0), getattr(var.sort, "hi", 0)
    return f"value {b} assigned to {var.name} is outside {lo}..{hi}", NO_MODEL_ERROR


class NativeSemantics:
    """The concrete semantics of ``system`` (with ``properties`` selected; default: all) in
    C compiled at optimization level ``opt`` (see :func:`~absmc.native.build.load_library`;
    default: :func:`~absmc.native.build.default_opt`; ``on_compile`` receives the compiler's
    process when one runs; ``prepared``: the generator and source already made for
    ``system`` and ``properties``).
    Raises :class:`~absmc.native.cgen.Unsupported` when the System cannot be translated and
    :class:`~absmc.native.build.CompilerError` when it cannot be compiled.

    Chain labels are interned as in :class:`~absmc.codegen.python.CompiledSystem` (append-only,
    ``len(commands) + k``)."""

    def __init__(
        self,
        system: System,
        properties: Sequence[Property] | None = None,
        opt: str | None = None,
        on_compile: Callable[[subprocess.Popen[str]], None] | None = None,
        prepared: tuple[CGen, str] | None = None,
    ) -> None:
        self._system = system
        self._properties = tuple(system.properties if properties is None else properties)
        if prepared is None:
            gen = CGen(system, self._properties)
            head, tail = runtime_sources()
            prepared = gen, gen.source(head, tail)
        gen = prepared[0]
        self.source: str = prepared[1]
        self.layout: Layout = gen.layout
        self.lib: Any = load_library(self.source, opt or default_opt(len(self.source)), on_compile)
        self._ffi = ffi()
        self._ctx = self._ffi.gc(self.lib.ctx_new(), self.lib.ctx_free)
        self._n = len(system.variables)
        self._slots = self.layout.slots
        self._ncmd = len(system.commands)
        self.chains: list[tuple[int, ...]] = []
        self._chain_ids: dict[tuple[int, ...], int] = {}
        self._state_props = [
            k for k, p in enumerate(self._properties) if p.kind in STATE_PROPERTY_KINDS
        ]
        self._viol = self._ffi.new("int32_t[]", max(1, len(self._properties)))
        self._out = self._ffi.new("int64_t[]", max(1, self._slots))
        self._found = self._ffi.new("int *")
        #: calls answered by the Python back end (a value outside 64 bits)
        self.fallbacks = 0

    # -- protocol ----------------------------------------------------------------------------
    @property
    def system(self) -> System:
        return self._system

    @property
    def properties(self) -> tuple[Property, ...]:
        return self._properties

    @property
    def state_checks(self) -> bool:
        return bool(self._state_props)

    @property
    def initial(self) -> State:
        return self._system.initial_state()

    def initial_states(self) -> list[State]:
        return [self._system.initial_state()]

    def commands_of(self, label: int) -> tuple[int, ...]:
        return (label,) if label < self._ncmd else self.chains[label - self._ncmd]

    def describe_state(self, s: State) -> dict[str, int | bool]:
        return self._system.state_dict(s)

    def describe_step(self, label: int) -> str:
        return describe_commands(self._system, self.commands_of(label))

    @cached_property
    def dependencies(self) -> tuple[GroupDeps, ...]:
        return group_dependencies(self._system)

    def intern(self, chain: tuple[int, ...]) -> int:
        """The label of a command sequence (a command index for one command)."""
        if len(chain) == 1:
            return chain[0]
        k = self._chain_ids.get(chain)
        if k is None:
            k = self._chain_ids[chain] = self._ncmd + len(self.chains)
            self.chains.append(chain)
        return k

    @cached_property
    def python(self) -> CompiledSystem:
        """The generated-Python back end of the same System (the fallback)."""
        return compile_system(self._system, self._properties)

    @property
    def cut_chains(self) -> int:
        """Exclusive chains cut at a repeated state so far (as ``CompiledSystem.cut_chains``)."""
        return int(self.lib.api_cuts(self._ctx))

    def _arr(self, s: State) -> Any:
        if len(s) != self._n:
            raise ValueError(f"a state of {self._n} values expected, got {len(s)}")
        vals = self.layout.to_slots(s)
        if vals is None:
            return None
        try:
            arr = self._ffi.new("int64_t[]", vals) if vals else self._ffi.new("int64_t[1]")
        except OverflowError:
            return None
        return arr if self.lib.api_in_range(arr) else None

    def _from_python(self, exp: Expansion, py: CompiledSystem) -> Expansion:
        steps = [(self.intern(py.commands_of(lab)), t) for lab, t in exp[0]]
        fails = tuple(
            Failure(self.intern(py.commands_of(f.label)), f.message, f.property) for f in exp[1]
        )
        return steps, fails

    def successors(self, s: State) -> Expansion:
        arr = self._arr(s)
        if arr is None or self.lib.api_successors(self._ctx, arr) != 0:
            self.fallbacks += 1
            return self._from_python(self.python.successors(s), self.python)
        lib, ctx, f, n = self.lib, self._ctx, self._ffi, self._slots
        conv = self.layout.from_slots
        nsteps = lib.api_nsteps(ctx)
        nfails = lib.api_nfails(ctx)
        steps: Successors = []
        if nsteps or nfails:
            ch = lib.api_ch(ctx)
            if nsteps:
                vals = f.unpack(lib.api_sst(ctx), nsteps * max(n, 1))
                offs = f.unpack(lib.api_soff(ctx), nsteps)
                lens = f.unpack(lib.api_slen(ctx), nsteps)
                w = max(n, 1)
                for i in range(nsteps):
                    chain = tuple(f.unpack(ch + offs[i], lens[i]))
                    steps.append((self.intern(chain), conv(vals[i * w : i * w + n])))
            if nfails:
                return steps, self._failures(ch, nfails)
        return steps, ()

    def _failures(self, ch: Any, nfails: int) -> Failures:
        lib, ctx, f = self.lib, self._ctx, self._ffi
        offs = f.unpack(lib.api_foff(ctx), nfails)
        lens = f.unpack(lib.api_flen(ctx), nfails)
        kinds = f.unpack(lib.api_fkind(ctx), nfails)
        fa = f.unpack(lib.api_fa(ctx), nfails)
        fb = f.unpack(lib.api_fb(ctx), nfails)
        out: list[Failure] = []
        for i in range(nfails):
            chain = tuple(f.unpack(ch + offs[i], lens[i]))
            msg, prop = failure_message(
                self._system, self._properties, chain[-1], kinds[i], fa[i], fb[i]
            )
            out.append(Failure(self.intern(chain), msg, prop))
        return tuple(out)

    def step(self, ci: int, s: State) -> tuple[State | None, Failures]:
        arr = self._arr(s)
        if arr is None or self.lib.api_step(self._ctx, ci, arr, self._out, self._found) != 0:
            self.fallbacks += 1
            return self.python.step(ci, s)
        nfails = self.lib.api_nfails(self._ctx)
        fails = self._failures(self.lib.api_ch(self._ctx), nfails) if nfails else ()
        mine = tuple(x for x in fails if x.label == ci)
        if not self._found[0]:
            return None, mine
        return self.layout.from_slots(self._ffi.unpack(self._out, self._slots)), mine

    def violated(self, s: State) -> list[int]:
        arr = self._arr(s)
        n = -1 if arr is None else self.lib.api_violated(self._ctx, arr, self._viol)
        if n < 0:
            self.fallbacks += 1
            return self.python.violated(s)
        return sorted(self._ffi.unpack(self._viol, n))

    def ok(self, s: State) -> bool:
        return not self.violated(s) if self._state_props else True

    def valid_end(self, s: State) -> bool:
        arr = self._arr(s)
        r = -1 if arr is None else self.lib.api_valid_end(self._ctx, arr)
        if r < 0:
            self.fallbacks += 1
            return self.python.valid_end(s)
        return bool(r)
