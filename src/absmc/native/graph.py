"""The reachable state graph in C for explicit CTL (``runtime_graph.c``), driven from Python in
time slices as :mod:`absmc.native.search`.

The C search enumerates the states reachable from the initial state breadth-first, as
:func:`absmc.engines.explicit.ctl.explore` does (the same successors, the same ids when the
steps come in the same order): packed state vectors in an open-addressing table, the successor
lists as CSR arrays (``off``, ``dst``; the first command of each step's chain in ``cmd``), the
predecessor lists likewise, and the value of each atomic proposition of the CTL formulas in
each state (``m_atoms``: each atom an IR state expression translated by
:class:`~absmc.native.cgen.CExpr`; an evaluation error, e.g. a division by zero, is false, as
in :func:`absmc.kernel.replay.witness.atom_holds`). Python reads the arrays into the
:class:`~absmc.engines.explicit.ctl.Graph` the labelling consumes; states are decoded from the C
vectors only when asked (a witness's states, looked up by :meth:`NativeGraph.find`).
"""

from __future__ import annotations

import itertools
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

from absmc.engines.explicit.ctl import Graph
from absmc.ir.ctl import And, Atom, Formula, Not, Or, Temporal, Until
from absmc.ir.steps import State
from absmc.ir.system import Property, System
from absmc.kernel.run.limits import OUT_OF_MEMORY, state_limit
from absmc.kernel.run.options import CheckOptions, Progress
from absmc.native.build import default_opt, load_library, runtime_sources
from absmc.native.cgen import CGen
from absmc.native.driver import SLICE_S, drive_slices
from absmc.native.search import NativeOverflow
from absmc.native.semantics import NativeSemantics

__all__ = ["NativeGraph", "atom_source", "atoms_of"]

_RUNNING, _DONE, _STATES, _OVERFLOW, _MEMORY, _SLICE = range(6)


def _runtime_graph() -> str:
    from importlib import resources

    return resources.files("absmc.native").joinpath("runtime_graph.c").read_text(encoding="utf-8")


def atoms_of(formulas: Sequence[Formula]) -> list[Atom]:
    """The distinct atomic propositions of ``formulas`` (ENF or not), in first-seen order."""
    out: dict[Atom, None] = {}

    def walk(f: Formula) -> None:
        if isinstance(f, Atom):
            out.setdefault(f)
        elif isinstance(f, Not | Temporal):
            walk(f.arg)
        elif isinstance(f, And | Or | Until):
            walk(f.left)
            walk(f.right)
        else:  # Implies and the other connectives of the AST
            for v in vars(f).values():
                if isinstance(v, Formula):
                    walk(v)

    for f in formulas:
        walk(f)
    return list(out)


def atom_source(gen: CGen, atoms: Sequence[Atom]) -> str:
    """C for ``m_atoms(C, v, out)``: ``out[k]`` = 1 when ``atoms[k]`` holds in unpacked state
    ``v`` (an evaluation error: 0). Raises :class:`~absmc.native.cgen.Unsupported` for an atom
    the generator does not translate."""
    lines = ["static void m_atoms(ctx_t *C, const int64_t *v, uint8_t *out) {", "    int64_t x;"]
    for k, a in enumerate(atoms):
        lines.append(f"    C->err = 0; x = {gen.tr.cb(a.expr)};")
        lines.append(f"    out[{k}] = (uint8_t)(x && !C->err);")
    lines += ["    (void)v; (void)x; (void)out; C->err = 0;", "}"]
    return "\n".join(lines) + "\n"


class _States(Sequence[State]):
    """The graph's states by id, decoded from the C vectors on access."""

    def __init__(self, owner: NativeGraph, handle: Any, n: int) -> None:
        self._owner, self._handle, self._n = owner, handle, n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> State: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[State]: ...
    def __getitem__(self, i: int | slice) -> State | Sequence[State]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self._owner.decode(self._handle, i % self._n)


class _Index(Mapping[State, int]):
    """State -> id, looked up in the C table."""

    def __init__(self, owner: NativeGraph, handle: Any, n: int) -> None:
        self._owner, self._handle, self._n = owner, handle, n

    def __getitem__(self, s: State) -> int:
        i = self._owner.find(self._handle, s)
        if i < 0:
            raise KeyError(s)
        return i

    def __iter__(self) -> Iterator[State]:
        return (self._owner.decode(self._handle, i) for i in range(self._n))

    def __len__(self) -> int:
        return self._n


class NativeGraph:
    """The model of ``system`` (``properties``: the selected safety properties, searched by
    :func:`absmc.native.search.native_search` on :attr:`sem`) with the atoms of ``formulas``
    compiled into one library (``opt``, ``on_compile``: as
    :class:`~absmc.native.semantics.NativeSemantics`). Raises
    :class:`~absmc.native.cgen.Unsupported` and :class:`~absmc.native.build.CompilerError`."""

    def __init__(
        self,
        system: System,
        properties: Sequence[Property],
        formulas: Sequence[Formula],
        opt: str | None = None,
        on_compile: Callable[[subprocess.Popen[str]], None] | None = None,
    ) -> None:
        self.atoms = atoms_of(formulas)
        gen = CGen(system, properties)
        head, tail = runtime_sources()
        source = gen.source(head, tail) + atom_source(gen, self.atoms) + _runtime_graph()
        opt = opt or default_opt(len(source))
        load_library(source, opt, on_compile)
        self.sem = NativeSemantics(system, properties, opt, prepared=(gen, source))
        self.lib: Any = self.sem.lib
        self.ffi: Any = self.sem._ffi
        #: figures of the last :meth:`explore`: C store bytes, CPU seconds of the C search and of
        #: reading its arrays back
        self.extra: dict[str, Any] = {}

    def decode(self, handle: Any, i: int) -> State:
        """State ``i`` of the graph held by ``handle``."""
        lay = self.sem.layout
        buf = self.ffi.new("int64_t[]", max(1, lay.slots))
        self.lib.g_state(handle, i, buf)
        return lay.from_slots(self.ffi.unpack(buf, lay.slots))

    def find(self, handle: Any, s: State) -> int:
        """The id of state ``s`` in the graph held by ``handle`` (-1: not in it)."""
        slots = self.sem.layout.to_slots(s)
        if slots is None:
            return -1
        return int(self.lib.g_find(handle, self.ffi.new("int64_t[]", slots or [0])))

    def explore(self, options: CheckOptions) -> Graph:
        """The reachable graph of the model, as :func:`absmc.engines.explicit.ctl.explore`
        builds it (ids, successor and predecessor lists, a dead state its own successor), with
        the atoms' labels in ``atom_sets``; ``complete`` false and ``stopped`` set when
        ``--max-states``, the deadline, ``--max-memory``, Ctrl-C or exhausted memory ended the
        search. Raises :class:`~absmc.native.search.NativeOverflow` when a value left the
        64-bit range."""
        lib, ffi = self.lib, self.ffi
        limits = options.limits
        start = time.monotonic()
        cpu0 = time.process_time()
        end = limits.end(start)
        handle = lib.g_new(len(self.atoms), -1 if limits.max_states is None else limits.max_states)
        if handle == ffi.NULL:
            raise MemoryError("the native graph search could not allocate its store")
        handle = ffi.gc(handle, lib.g_free)
        slots = self.sem.layout.to_slots(self.sem.initial)
        if slots is None:
            raise NativeOverflow("the initial state does not fit its variables")
        status = lib.g_init(handle, ffi.new("int64_t[]", slots or [0]))
        stopped: str | None = None
        if status in (_RUNNING, _SLICE):

            def progress_of(elapsed: float) -> Progress:
                return Progress(int(lib.g_stat(handle, 0)), int(lib.g_stat(handle, 1)), 0, elapsed)

            status, stopped = drive_slices(
                lambda: int(lib.g_run(handle, SLICE_S)),
                _SLICE,
                limits,
                start,
                end,
                options.progress,
                progress_of,
            )
        if status == _OVERFLOW:
            raise NativeOverflow("a value left the 64-bit range")
        if status == _STATES:
            stopped = state_limit(limits.max_states)
        elif status == _MEMORY:
            stopped = OUT_OF_MEMORY
        searched = time.process_time() - cpu0
        n = int(lib.g_stat(handle, 0))
        self.extra = {"backend": "native", "graph_store_bytes": int(lib.g_stat(handle, 3))}
        states = _States(self, handle, n)
        index = _Index(self, handle, n)
        if stopped is not None:
            return Graph(states, index, [], [], False, stopped)
        if not lib.g_finish(handle):
            return Graph(states, index, [], [], False, OUT_OF_MEMORY)
        ne = int(lib.g_stat(handle, 1))
        off = ffi.unpack(lib.g_off(handle), n + 1)
        dst = ffi.unpack(lib.g_dst(handle), ne)
        poff = ffi.unpack(lib.g_poff(handle), n + 1)
        psrc = ffi.unpack(lib.g_psrc(handle), ne)
        succ = [dst[a:b] for a, b in zip(off, itertools.islice(off, 1, None), strict=False)]
        pred = [psrc[a:b] for a, b in zip(poff, itertools.islice(poff, 1, None), strict=False)]
        col = ffi.new("uint8_t[]", max(1, n))
        atom_sets: dict[Formula, set[int]] = {}
        for k, a in enumerate(self.atoms):
            lib.g_atom_column(handle, k, col)
            atom_sets[a] = set(itertools.compress(range(n), bytes(ffi.buffer(col, n))))
        self.extra["graph_cpu_s"] = round(searched, 3)
        self.extra["read_back_cpu_s"] = round(time.process_time() - cpu0 - searched, 3)
        # the lazy states and index hold the handle: the C graph lives while they do
        return Graph(states, index, succ, pred, True, None, atom_sets)
