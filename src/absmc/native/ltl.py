"""Linear-time properties in C: the product of the model with each property's Büchi automaton
and SPIN's nested depth-first search (``runtime_ltl.c``; Holzmann, Peled, Yannakakis, "On
nested depth first search", 1996), one thread, with SPIN's weak fairness (``-f``: the counter
construction of :mod:`absmc.kernel.ltl.fairness`) and non-progress cycles (``-l``), and the
exact store or, as SPIN's ``-DHC`` and ``-DBITSTATE``, a hash-compact or bitstate one (the
stacks then keep their own states: docs/ltl.md, "Compact stores").

The automata are the ones the Python back end searches with (:func:`absmc.kernel.ltl.ltl.
automaton_of`: Spot's translation of the negated formula, or a never claim): their states,
accepting states and edges are compiled into the model's C (``m_claim``: each edge guard is an
IR state expression, translated as the model's own expressions by
:class:`~absmc.native.cgen.CExpr`; a guard whose evaluation fails, e.g. a division by zero, is
false, as in :func:`absmc.kernel.ltl.irproduct.guard_fn`). One library serves every property of a
run. The search's order and semantics are :class:`~absmc.kernel.ltl.product.ProductSemantics`'s
with ``spin_order`` and :class:`~absmc.kernel.explore.nested.NestedDfs`'s with ``early``, so the C
and Python searches visit the same product states.

A lasso found in C comes back as its sequence of product states (system state, automaton
state); :func:`lasso_labels` turns it into the Python back end's product labels by matching
each step among the Python product's successors, and :func:`absmc.kernel.ltl.ltl.ltl_result`
replays it on the concrete semantics as it replays a Python lasso: ``violated`` only with a
replayed lasso. A safety violation met on the way (a failing step, a violated state property,
an invalid end state with ``deadlock``) raises :class:`SafetyMet`: the caller searches again
in Python, which reports it with its path.

With ``workers`` >= 2 the product is searched by CNDFS (``runtime_cndfs.c``: Evangelista,
Laarman, Petrucci, van de Pol, "Improved multi-core nested depth-first search", ATVA 2012) in
that many threads sharing one exact store: the same verdicts (fairness and non-progress
cycles included: they are properties of the product searched), a lasso of the first thread to
find one, replayed as above.
"""

from __future__ import annotations

import copy
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from absmc.ir.ltl import NON_PROGRESS, Automaton, LtlProperty
from absmc.ir.steps import State
from absmc.ir.system import Property, System
from absmc.kernel.explore.nested import Lasso
from absmc.kernel.explore.search import SearchOutcome
from absmc.kernel.explore.store import bitstate_stats
from absmc.kernel.ltl.fairness import FairSemantics, fair_decode
from absmc.kernel.ltl.irproduct import fair_product, product_of
from absmc.kernel.ltl.ltl import LtlOutcome, automaton_of
from absmc.kernel.ltl.por import product_visible, stutter_refusal
from absmc.kernel.ltl.product import ProductSemantics
from absmc.kernel.model.irsemantics import IRSemantics
from absmc.kernel.run.limits import depth_limit, state_limit
from absmc.kernel.run.options import Limits, Progress
from absmc.native.background import ForkedValue
from absmc.native.build import default_opt, load_library, runtime_sources
from absmc.native.cgen import CGen, c_const, ltl_conditions
from absmc.native.driver import SLICE_S, drive_slices
from absmc.native.fairpor import SafeConditions
from absmc.native.search import NativeOverflow, bitstate_coverage, omission_probability
from absmc.native.semantics import NativeSemantics

__all__ = [
    "CNDFS_MAX_THREADS",
    "POR",
    "LtlStore",
    "NativeLtl",
    "SafetyMet",
    "claim_source",
    "lasso_labels",
    "reduction_refusal",
]

(
    _RUNNING,
    _DONE,
    _FOUND,
    _STATES,
    _OVERFLOW,
    _MEMORY,
    _SLICE,
    _SAFETY,
) = range(8)


#: the product search's stores (``l_set_store``'s kinds)
LtlStore = Literal["exact", "hash-compact", "bitstate"]
_STORE_KIND = {"exact": 0, "hash-compact": 1, "bitstate": 2}

#: the most threads a CNDFS search runs (its flag word per state: 2 + 2 bits per thread)
CNDFS_MAX_THREADS = 31


#: the name of the product search's reduction in the ``--json`` statistics
POR = "partial-order"

#: the C library's tables when the product search never reduces (``LPOR_ROWS`` 0)
_NO_LTL_POR = (
    "static int m_lpor_cond(int j, const int64_t *v, ctx_t *C) {"
    " (void)j; (void)v; (void)C; return 1; }\n"
    "#define LPOR_ROWS 0\n"
    "static const int32_t m_lpor_proc[] = {0};\n"
    "static const int32_t m_lpor_slot[] = {0};\n"
    "static const int32_t m_lpor_off[] = {0};\n"
    "static const int64_t m_lpor_locs[] = {0};\n"
    "static int m_lfpor_cond(int j, const int64_t *v, ctx_t *C) {"
    " (void)j; (void)v; (void)C; return 1; }\n"
    "#define LFPOR_ROWS 0\n"
    "static const int32_t m_lfpor_proc[] = {0};\n"
    "static const int32_t m_lfpor_slot[] = {0};\n"
    "static const int32_t m_lfpor_off[] = {0};\n"
    "static const int64_t m_lfpor_locs[] = {0};\n"
    "static const uint8_t m_lfwd[] = {0};\n"
)


def reduction_refusal(prop: LtlProperty, weakly_fair: bool, threads: int) -> str | None:
    """Why the C product search for ``prop`` runs unreduced (``None``: it may reduce): the
    reduction preserves only stutter-invariant properties (Peled 1994: next-free LTL), so never
    claims (not known to be stutter-invariant) and formulas with ``X`` stay unreduced, as does
    the non-progress property (its progress labels are read by every step). One thread under
    ``weakly_fair`` reduces with its own safe locations (:mod:`absmc.native.fairpor`; the
    argument: docs/reductions.md, "Weak fairness"); CNDFS (``threads`` >= 2) reduces with the
    static cycle proviso (its threads need one reduced graph: docs/reductions.md, "CNDFS"),
    not under weak fairness."""
    why = stutter_refusal(prop)  # the Python back end's rule (kernel/ltl/por.py)
    if why is not None:
        return why
    if threads > 1 and weakly_fair:
        return "CNDFS (--workers >= 2) under weak fairness searches the product unreduced"
    return None


class SafetyMet(Exception):
    """The C product search met a safety violation (the Python back end reports it)."""


def _runtime_ltl(cndfs: bool = True, compact: bool = False) -> str:
    """runtime_ltl.c, then (``compact``) runtime_ltl_compact.c, then (``cndfs``)
    runtime_cndfs.c: each part only where the library needs it (C for gcc to compile)."""
    from importlib import resources

    pkg = resources.files("absmc.native")
    files = ["runtime_ltl.c"]
    files += ["runtime_ltl_compact.c"] if compact else []
    files += ["runtime_cndfs.c"] if cndfs else []
    text = "".join(pkg.joinpath(f).read_text(encoding="utf-8") for f in files)
    return ("#define LTL_COMPACT 1\n" if compact else "") + text


def claim_source(gen: CGen, automata: Sequence[Automaton]) -> str:
    """C for ``automata`` (claim ``k`` is ``automata[k]``): ``m_claim(C, v, k, q, out)`` writes
    the targets of the edges of ``q`` whose guards hold in unpacked state ``v`` (edge order)
    and returns their number; ``m_claim_init(k)``, ``m_claim_acc(k, q)`` (accepting),
    ``m_claim_size(k)`` (states). Raises :class:`~absmc.native.cgen.Unsupported` for a guard
    the generator does not translate."""
    tr = gen.tr
    out: list[str] = []
    for k, aut in enumerate(automata):
        out.append(f"static int m_claim{k}(ctx_t *C, const int64_t *v, int q, int32_t *out) {{")
        out.append("    int n = 0; int64_t x;")
        out.append("    switch (q) {")
        for q, edges in enumerate(aut.edges):
            out.append(f"    case {q}:")
            for e in edges:
                out.append(f"        C->err = 0; x = {tr.cb(e.guard)};")
                out.append(f"        if (x && !C->err) out[n++] = {e.target};")
            out.append("        break;")
        out.append("    default: break;")
        out.append("    }")
        out.append("    (void)C; (void)v; (void)x; C->err = 0;")
        out.append("    return n;")
        out.append("}")
        acc = ", ".join("1" if q in aut.accepting else "0" for q in range(aut.size)) or "0"
        out.append(f"static const uint8_t m_acc{k}[] = {{{acc}}};")
    n = len(automata)
    out.append("static int m_claim(ctx_t *C, const int64_t *v, int k, int q, int32_t *out) {")
    out.append("    switch (k) {")
    out += [f"    case {k}: return m_claim{k}(C, v, q, out);" for k in range(n)]
    out.append("    default: return 0;")
    out.append("    }")
    out.append("}")
    inits = ", ".join(c_const(a.initial) for a in automata) or "0"
    sizes = ", ".join(str(a.size) for a in automata) or "0"
    out.append(f"static const int32_t m_claim_inits[] = {{{inits}}};")
    out.append(f"static const int32_t m_claim_sizes[] = {{{sizes}}};")
    out.append("static int m_claim_init(int k) { return m_claim_inits[k]; }")
    out.append("static int m_claim_size(int k) { return m_claim_sizes[k]; }")
    out.append("static int m_claim_acc(int k, int q) {")
    out.append("    switch (k) {")
    out += [f"    case {k}: return m_acc{k}[q];" for k in range(n)]
    out.append("    default: return 0;")
    out.append("    }")
    out.append("}")
    return "\n".join(out) + "\n"


def lasso_labels(
    sem: IRSemantics, aut: Automaton, states: Sequence[State], stutter: bool, fair: bool = False
) -> list[int]:
    """The product labels (:mod:`absmc.kernel.ltl.product`) of a path given by its product states
    ``states`` (each ``system state + (q,)``; with ``fair``, ``+ (q, c)`` with the weak-fairness
    counter ``c``), found among the successors of ``sem`` × ``aut`` (with ``fair``, of
    :class:`~absmc.kernel.ltl.fairness.FairSemantics` over it, so that the step chosen moves the
    counter as the C search did: the path stays a weakly fair one); a step to an equal state,
    any of several is as good. Raises ``ValueError`` when a step is not a product step."""
    product = product_of(sem, aut, stutter=stutter)
    searched: ProductSemantics | FairSemantics = fair_product(product, sem) if fair else product
    k_processes = len(sem.system.processes)
    labels: list[int] = []
    for k in range(len(states) - 1):
        target = states[k + 1]
        hit = next((lab for lab, t in searched.successors(states[k])[0] if t == target), None)
        if hit is None:
            raise ValueError(f"step {k + 1} of the C lasso is not a product step")
        labels.append(fair_decode(hit, k_processes)[0] if fair else hit)
    return labels


class NativeLtl:
    """The model of ``system`` (``properties``: the selected safety properties) with the
    automata of ``ltl`` compiled into one library (``opt``: as
    :class:`~absmc.native.semantics.NativeSemantics`; ``on_compile``: as
    :func:`~absmc.native.build.load_library`; ``por=False``: without the partial-order tables,
    for a library whose ``sem`` never runs a reduced safety search; ``ltl_por``: with the
    product search's partial-order tables, whose visible variables are the state properties'
    and those the guards of the automata of the properties that may reduce read,
    :func:`reduction_refusal`; ``fair_por``: also those of the search under weak fairness,
    :mod:`absmc.native.fairpor`, else that search runs unreduced; ``cndfs=False``: without the
    multi-core search, for a library whose :meth:`search` runs one thread; ``compact``: with
    the hash-compact and bitstate stores, else the exact one only; ``por=False`` also
    leaves out the safety search, :func:`~absmc.native.build.runtime_sources`: less C to
    compile; ``generate(make)``: returns ``make()``'s C source, made where it chooses, e.g.
    :func:`~absmc.native.background.run_forked`; default: here). Raises
    :class:`~absmc.native.cgen.Unsupported` and :class:`~absmc.native.build.CompilerError`."""

    def __init__(
        self,
        system: System,
        properties: Sequence[Property],
        ltl: Sequence[LtlProperty],
        opt: str | None = None,
        on_compile: Callable[[subprocess.Popen[str]], None] | None = None,
        por: bool = True,
        ltl_por: bool = False,
        cndfs: bool = True,
        fair_por: bool = False,
        generate: Callable[[Callable[[], str]], str] | None = None,
        compact: bool = False,
    ) -> None:
        self.cndfs = cndfs
        self.compact = compact
        self.automata = {p.name: automaton_of(p) for p in ltl}
        self.index = {p.name: k for k, p in enumerate(ltl)}
        self.ltl_por = ltl_por and any(reduction_refusal(p, False, 1) is None for p in ltl)
        self.fair_por = self.ltl_por and fair_por
        gen = CGen(system, properties, por)

        def make() -> str:
            head, tail = runtime_sources(search=por)
            # the tables' analyses in a forked child while the model's code is generated here
            visible = self._visible(properties, ltl)
            analysed = (
                ForkedValue(lambda: ltl_conditions(system, visible, self.fair_por))
                if self.ltl_por
                else None
            )
            try:
                model = gen.source(head, tail)
                model += claim_source(gen, [self.automata[p.name] for p in ltl])
            except BaseException:  # Unsupported, Ctrl-C: the child is not waited for
                if analysed is not None:
                    analysed.cancel()
                raise
            tables = self._ltl_tables(gen, visible, analysed)
            return model + tables + _runtime_ltl(cndfs, compact)

        # ``generate(make)``: where the source is made (auto: a forked child, so that the
        # Python search beside the build keeps the GIL; native/background.py run_forked)
        source = make() if generate is None else generate(make)
        #: the library's C source and the level it was compiled at
        self.source = source
        self.opt = opt or default_opt(len(source))
        self._gen = gen
        self._properties = tuple(properties)
        self._load(on_compile)

    def _load(self, on_compile: Callable[[subprocess.Popen[str]], None] | None) -> None:
        # compiled and cached once for both handles below
        load_library(self.source, self.opt, on_compile)
        system = self._gen.system
        self.sem = NativeSemantics(
            system, self._properties, self.opt, prepared=(self._gen, self.source)
        )
        self.lib: Any = self.sem.lib
        self.ffi: Any = self.sem._ffi

    def recompiled(
        self, opt: str, on_compile: Callable[[subprocess.Popen[str]], None] | None = None
    ) -> NativeLtl:
        """The same library compiled at ``opt`` (its source is not made again): a twin whose
        searches give the same outcomes (``auto`` moves a long search from ``-O0`` to it).
        Raises :class:`~absmc.native.build.CompilerError`."""
        twin = copy.copy(self)
        twin.opt = opt
        twin._load(on_compile)
        return twin

    def _visible(
        self, properties: Sequence[Property], ltl: Sequence[LtlProperty]
    ) -> frozenset[str]:
        """The variables the product search's ample sets must not write (C2: the selected
        state properties' and those the guards of the automata that may reduce read)."""
        reducible = [self.automata[p.name] for p in ltl if reduction_refusal(p, False, 1) is None]
        return product_visible(properties, reducible)

    def _ltl_tables(
        self,
        gen: CGen,
        visible: frozenset[str],
        analysed: ForkedValue[tuple[SafeConditions, SafeConditions]] | None,
    ) -> str:
        """The product search's safe locations; with :attr:`fair_por` also those of its search
        under weak fairness (``analysed``: their :func:`~absmc.native.cgen.ltl_conditions`,
        ``None`` without :attr:`ltl_por`)."""
        if analysed is None:
            return _NO_LTL_POR
        return gen.ltl_ample_source(visible, self.fair_por, analysed.result(), self.cndfs)

    def search(
        self,
        python: IRSemantics,
        prop: LtlProperty,
        limits: Limits | None = None,
        progress: Callable[[Progress], None] | None = None,
        stutter: bool = True,
        safety: bool = False,
        deadlock: bool = False,
        spin_order: bool = True,
        weakly_fair: bool = False,
        workers: int = 1,
        reduce: bool = False,
        hand_over: Callable[[], bool] | None = None,
        store: LtlStore = "exact",
        bitstate_bits: int = 27,
        hash_functions: int = 3,
    ) -> LtlOutcome:
        """The nested DFS for ``prop`` in C, as :func:`absmc.kernel.ltl.ltl.search_ltl` with
        ``store``: ``exact``, ``hash-compact`` (each state a 64-bit hash, SPIN's ``-DHC``) or
        ``bitstate`` (``2**bitstate_bits`` bits, ``hash_functions`` bits per state, SPIN's
        ``-DBITSTATE``; both searches in one array, the nested ones with a second key per state,
        as SPIN's second copy), never a proof when the search finds no lasso; with no collision
        a compact store visits the exact store's states (``stutter``: SPIN's stuttering at
        terminal states, never for the
        non-progress property; ``spin_order``: SPIN's step order and early cycle detection;
        ``weakly_fair``: SPIN's ``-f``, the counter construction of
        :mod:`absmc.kernel.ltl.fairness` in C, the same product states). ``workers`` >= 2:
        CNDFS in that many threads (``runtime_cndfs.c``; Evangelista, Laarman, Petrucci, van de
        Pol, ATVA 2012; at most :data:`CNDFS_MAX_THREADS`), same verdicts, the states counted
        are the shared store's and the lasso is the first one a thread found; with a depth
        bound (``limits.max_depth``) or a compact ``store`` the one-thread search runs, with
        the reason in ``extra["workers_note"]``. The lasso is in the labels of ``python`` × the
        automaton (:func:`lasso_labels`); ``extra`` has ``store``, the C store's bytes (with a
        compact store the keys or bits and the ample choices by hash, not the stacks' states),
        the bitstate store's coverage (:func:`~absmc.kernel.explore.store.bitstate_stats`) or the
        hash-compact store's ``omission_probability``, ``workers`` (threads
        used), ``reductions`` (``["partial-order"]`` when the product search reduced: ``reduce``,
        a library built with ``ltl_por`` and no :func:`reduction_refusal`; then
        ``reduced_states``, the product states expanded by an ample set only (with
        ``weakly_fair``: the ample sets of :mod:`absmc.native.fairpor`, one choice per
        ``(s, q)`` for every counter copy; with CNDFS: the blue expansions by an ample set of
        the static proviso, a state expanded by several threads once per thread), else
        ``reduction_note`` with the reason when ``reduce`` was asked) and with CNDFS
        ``blue_per_worker`` (states each thread expanded in its blue
        search: their sum less the states stored is the work done twice). Raises
        :class:`SafetyMet` (with ``safety``), :class:`NativeOverflow` (a value left 64 bits),
        ``MemoryError`` (the store could not be allocated), ``ValueError`` for ``workers`` >= 2
        on a library built without CNDFS, a compact ``store`` on one built without them
        (``compact``), a bitstate size outside 2^3..2^40 bits or
        ``hash_functions`` outside 1..32. ``hand_over()``, asked between two slices of
        :data:`~absmc.native.driver.SLICE_S` seconds, ends the search with ``stopped`` =
        :data:`~absmc.kernel.explore.search.HANDED_OVER` when it returns true (the outcome is
        then partial, to be discarded)."""
        limits = limits or Limits()
        stutter = stutter and prop.name != NON_PROGRESS  # SPIN's -l does not stutter either
        lib, ffi = self.lib, self.ffi
        aut = self.automata[prop.name]
        start = time.monotonic()
        end = limits.end(start)
        sem = self.sem
        note = None
        threads = min(max(workers, 1), CNDFS_MAX_THREADS)
        if threads > 1 and limits.max_depth is not None:
            threads, note = 1, "one thread: the multi-core search (CNDFS) takes no depth bound"
        if threads > 1 and store != "exact":
            threads, note = 1, f"one thread: the multi-core search (CNDFS) has no {store} store"
        if store == "bitstate" and not (3 <= bitstate_bits <= 40 and 1 <= hash_functions <= 32):
            raise ValueError("bitstate size must be 2^3..2^40 bits with 1..32 hash functions")
        if threads > 1 and not self.cndfs:
            raise ValueError("this library was built without the multi-core search (cndfs)")
        if store != "exact" and not self.compact:
            raise ValueError("this library was built without the compact stores (compact)")
        max_states = -1 if limits.max_states is None else limits.max_states
        api: Any
        if threads > 1:
            api = _Api(lib, "cn")
            handle = lib.cn_new(
                self.index[prop.name],
                int(stutter),
                int(safety),
                int(deadlock),
                int(sem.state_checks),
                int(weakly_fair),
                max_states,
                threads,
            )
        else:
            api = _Api(lib, "l")
            handle = lib.l_new(
                self.index[prop.name],
                int(stutter),
                int(safety),
                int(deadlock),
                int(sem.state_checks),
                int(spin_order),
                max_states,
                -1 if limits.max_depth is None else limits.max_depth,
            )
        if handle == ffi.NULL:
            raise MemoryError("the native LTL search could not allocate its store")
        handle = ffi.gc(handle, api.free)
        why = reduction_refusal(prop, weakly_fair, threads) if reduce else None
        if reduce and why is None and not self.ltl_por:
            why = "the product search's library has no partial-order tables"
        if reduce and why is None and weakly_fair and not self.fair_por:
            why = "the product search's library has no weak-fairness partial-order tables"
        if reduce and why is None and weakly_fair and store != "exact":
            why = (
                f"weak fairness with the {store} store (the reduction's one choice per (s, q) "
                "needs the exact store)"
            )
        reduced = False
        if threads > 1 and reduce and why is None:
            reduced = bool(lib.cn_set_reduce(handle, 1))
            if not reduced:
                why = "no location is safe for the property"
        if threads == 1:
            lib.l_set_fair(handle, int(weakly_fair))
            if store != "exact" and not lib.l_set_store(
                handle, _STORE_KIND[store], bitstate_bits, hash_functions
            ):
                raise MemoryError(f"the native LTL search could not allocate its {store} store")
            if reduce and why is None:
                reduced = bool(lib.l_set_reduce(handle, 1))
                if not reduced:
                    why = "no location is safe for the property"
        slots = sem.layout.to_slots(sem.initial)
        if slots is None:
            raise NativeOverflow("the initial state does not fit its variables")
        init = ffi.new("int64_t[]", slots or [0])
        out = SearchOutcome()

        def progress_of(elapsed: float) -> Progress:
            return Progress(api.stat(handle, 0), api.stat(handle, 1), api.stat(handle, 8), elapsed)

        try:
            status, out.stopped = drive_slices(
                lambda: int(api.run(handle, init, SLICE_S)),
                _SLICE,
                limits,
                start,
                end,
                progress,
                progress_of,
                hand_over,
            )
        finally:
            if threads > 1:  # every thread stopped: the counts below are final
                lib.cn_stop(handle)
        if status == _SAFETY:
            raise SafetyMet(f"the C product search of ltl '{prop.name}' met a safety violation")
        if status == _OVERFLOW:
            raise NativeOverflow("a value left the 64-bit range")
        if status == _MEMORY:
            raise MemoryError("the native LTL search ran out of memory")
        if status == _STATES:
            out.stopped = state_limit(limits.max_states)
        out.states = int(api.stat(handle, 0))
        out.transitions = int(api.stat(handle, 1))
        out.max_depth = int(api.stat(handle, 2))
        if api.stat(handle, 3) and out.stopped is None and status != _FOUND:
            out.stopped = depth_limit(limits.max_depth)
        out.limit_hit = out.stopped is not None
        # the search's time, as the Python back end's: without matching the lasso's steps on
        # the Python product below (a lasso of 800 steps: most of a 0.03 s run)
        out.time_s = time.monotonic() - start
        lasso = None
        if status == _FOUND:
            n = int(api.stat(handle, 5))
            buf = ffi.new("int64_t[]", max(1, sem.layout.slots))
            states: list[State] = []
            for k in range(n):
                q = int(api.lasso_state(handle, k, buf))
                s = sem.layout.from_slots(ffi.unpack(buf, sem.layout.slots))
                fc = (int(api.lasso_counter(handle, k)),) if weakly_fair else ()
                states.append((*s, q, *fc))
            labels = lasso_labels(python, aut, states, stutter, weakly_fair)
            lasso = Lasso(labels, int(api.stat(handle, 6)))
            out.stopped = f"stopped at the first violation ({prop.name})"
        found = LtlOutcome(out, lasso, int(api.stat(handle, 4)), aut, weakly_fair)
        found.extra = {
            "backend": "native",
            "store": store,
            "store_bytes": int(api.stat(handle, 7)),
            "workers": threads,
        }
        if store == "bitstate":
            counts = ffi.new("int64_t[5]")
            lib.l_bitstate_counts(handle, counts)
            cov = bitstate_coverage(list(counts), bitstate_bits, hash_functions)
            found.extra.update(bitstate_stats(cov, bitstate_bits, hash_functions, out.stopped))
        elif store == "hash-compact":
            p = omission_probability(out.states)
            found.extra["omission_probability"] = float(f"{p:.3g}")
        if reduced:
            found.extra["reductions"] = [POR]
            found.extra["reduced_states"] = int(api.stat(handle, 9 if threads == 1 else 11))
        elif why is not None:
            found.extra["reduction_note"] = why
        if threads > 1:  # the states each thread expanded in its blue search
            found.extra["blue_per_worker"] = [
                int(lib.cn_stat(handle, 16 + p)) for p in range(threads)
            ]
        if note is not None:
            found.extra["workers_note"] = note
        return found


class _Api:
    """The entry points of one C product search: ``l_*`` (runtime_ltl.c, one thread) or
    ``cn_*`` (runtime_cndfs.c, CNDFS), which take the same arguments after ``new``."""

    def __init__(self, lib: Any, prefix: str) -> None:
        self.free = getattr(lib, f"{prefix}_free")
        self.run = getattr(lib, f"{prefix}_run")
        self.stat = getattr(lib, f"{prefix}_stat")
        self.lasso_state = getattr(lib, f"{prefix}_lasso_state")
        self.lasso_counter = getattr(lib, f"{prefix}_lasso_counter")
