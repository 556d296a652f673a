"""The component as a state machine behind the kernel's ``Semantics`` protocol (Bao's thesis,
ch. 3, Fig. 3.2: the checker executes the component's transitions and the environment's code
natively, one atomic step per call).

A state is ``(globals, cells, threads, heap)``, all encoded by :mod:`absmc.component.values`:

* ``globals``: the tracked module globals (the component's data the program keeps there),
  in :attr:`Program.roots` order (``("u",)`` when unbound);
* ``cells``: the closure cells the component's functions read;
* ``threads``: one ``(name, handle, status, frames, daemon)`` per thread in start order
  (thread 0 runs the entry function). ``status``: ``0`` runnable, ``"D"`` ended, ``"X"``
  ended by an uncaught exception, ``("W", condition, count, timed, predicate)`` waiting on a
  condition, ``("N", condition, count, result, predicate)`` woken, reacquiring its lock.
  A frame is ``(function index, pc, locals, mode)`` (mode 1: a constructor, returns ``self``);
* ``heap``: the cells of the component's objects, numbered canonically.

A step is identified by the label ``thread * LABELS + choice`` (choices: a timeout, an
``env_choices`` result). Every step materializes the state as live objects, executes one
instruction of one thread, and encodes the result again.
"""

from __future__ import annotations

import contextlib
import time
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from absmc.component.changes import encode_changes
from absmc.component.guard import (
    CHECK_CONSTRUCTORS,
    REAL_THREAD,
    THREAD_METHODS,
    NativeComponentCall,
    NativeUseError,
    RealThreadStart,
    call_native,
    guarded,
    thread_init,
    zero_arg_super,
)
from absmc.component.guard import STATE as GUARD
from absmc.component.joined import MAX_INVISIBLE, JoinedSteps
from absmc.component.memo import Memo, step_key
from absmc.component.memo import apply as memo_apply
from absmc.component.memo import delta as memo_delta
from absmc.component.reduction import Reduction, closed_call
from absmc.component.stable import passes_objects, program_files, stable_attributes
from absmc.component.sync import (
    CONSTRUCTORS,
    REAL_TYPES,
    convert,
    lock_free_for,
    release_all,
    take,
)
from absmc.component.sync import call as sync_call
from absmc.component.threads import ThreadSteps
from absmc.component.translate import (
    ASSERT,
    BRANCH,
    CALL,
    DELETE,
    EXEC,
    FOR_NEXT,
    JUMP,
    MATCH,
    RAISE,
    RERAISE,
    RETURN,
    FuncCode,
    Instr,
)
from absmc.component.values import (
    ENC_TRUE,
    NESTED,
    UNBOUND,
    Decoder,
    Encoder,
    Hashed,
    NativeSyncUse,
    Opaque,
    SyncHandle,
    SyncMethod,
    dec_seq,
    enc_seq,
    fingerprint,
    reenc_seq,
)
from absmc.errors import UsageError
from absmc.ir.span import SourceSpan
from absmc.ir.steps import NO_FAILURES, Expansion, Failure, Failures, State
from absmc.kernel.model.semantics import PropertyDesc
from absmc.kernel.run.result import StateValue

#: labels per thread: ``label = thread * LABELS + choice``
LABELS = 1024

ASSERT_PROPERTY = "assert"
UNCAUGHT_PROPERTY = "no-uncaught-exception"

_PROPERTIES = (
    PropertyDesc(ASSERT_PROPERTY, "assert"),
    PropertyDesc(UNCAUGHT_PROPERTY, "assert"),
)


@dataclass
class BorderCall:
    """A call from the component into the environment as it happened (thesis ch. 4: a border
    state): the callee's ``module`` and ``qualname``, the arguments and the result (``repr``
    texts), or the exception type raised."""

    module: str
    qualname: str
    args: str
    kwargs: str
    result: str | None
    raised: str | None
    line: str


@dataclass
class Program:
    """What the machine needs of the program: the translated functions (``funcs``, indexed
    by ``FuncCode.index``), the component classes, the tracked globals (``roots``) of the
    module namespace ``namespace``, the tracked closure ``cells``, the owned classes (their
    instances are heap objects), nondeterministic environment functions (``env_choices``:
    function -> list of results, or a callable of the arguments giving the list)."""

    namespace: dict[str, Any]
    funcs: list[FuncCode]
    classes: frozenset[type]
    roots: tuple[str, ...]
    cells: tuple[types.CellType, ...]
    owned_classes: frozenset[type]
    env_choices: Mapping[Any, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.fid_of = {id(fc.func): fc.index for fc in self.funcs}
        #: nested functions (a new function object per ``def``): by code
        self.nested_fid = {fc.func.__code__: fc.index for fc in self.funcs if fc.free_slots}
        self.nested_fid.update(
            {
                fc.func.__code__: fc.index
                for fc in self.funcs
                if fc.func.__closure__ is not None and fc.func.__code__ in NESTED
            }
        )


class _Thread:
    """A thread during a step: live ``frames``, or (a thread that does not step: ``frames``
    given as ``None``, ``lazy``) an empty list and its encoded frames in ``enc``; a lazy
    thread's ``handle`` and ``status`` are encoded too."""

    __slots__ = ("daemon", "enc", "frames", "handle", "henc", "lazy", "name", "status")

    def __init__(
        self,
        name: str,
        handle: Any,
        status: Any,
        frames: list[list[Any]] | None,
        daemon: bool,
        enc: Any = (),
        henc: bool = False,
    ) -> None:
        self.name = name
        self.handle = handle
        #: ``handle`` is still encoded (a step never needs its own thread's handle object)
        self.henc = henc or frames is None
        self.status = status
        self.lazy = frames is None
        self.frames: list[list[Any]] = [] if frames is None else frames
        self.daemon = daemon
        self.enc = enc


class _Raise(Exception):
    """An exception raised in the component at a step (carried to the unwinder)."""


class ComponentSemantics(ThreadSteps, JoinedSteps):
    """The :class:`~absmc.kernel.model.semantics.Semantics` of a component: ``successors``,
    ``step``, ``valid_end`` (every thread ended, or only daemon threads remain), no state
    properties (assertions and uncaught exceptions are failures of steps)."""

    def __init__(
        self,
        program: Program,
        entry: FuncCode,
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None = None,
        record: bool = False,
        memoize: bool = True,
        reduce: bool = False,
    ) -> None:
        self.prog = program
        #: the entry's arguments (the CPython oracle runs the program again with them)
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        #: steps are memoized (:mod:`absmc.component.memo`); ``memo_hits`` counts the reuses
        self.memoize = memoize
        self.memo_hits = 0
        self.opaque = Opaque()
        self.record = record
        #: (callee, input fingerprint) -> output fingerprint; and what differed
        self.env_outputs: dict[Any, Any] = {}
        self.nondeterministic: list[str] = []
        self.border: dict[Any, BorderCall] = {}
        self.env_calls = 0
        #: environment calls that may touch state outside the component (never reordered)
        self.hidden_calls = 0
        self.env_time = 0.0
        #: when set, the (function index, pc) of every instruction a step executes, and the
        #: observer told of every transition ``successors`` computes: ``(source, thread,
        #: target or None, executed instructions, failed)`` (the PA+TP exactness check)
        self.exec_log: list[tuple[int, int]] | None = None
        self.on_transition: (
            Callable[[State, int, State | None, list[tuple[int, int]], bool], None] | None
        ) = None
        self.memo = Memo()
        #: the attribute names written outside constructors (:mod:`.stable`; ``None``: no
        #: attribute read is joined); ``stable_used``: one was; ``stable_broken``: a library
        #: call received a component object (the check then runs again without)
        files = program_files(program.namespace.get("__file__"), [fc.file for fc in program.funcs])
        self.unstable: frozenset[str] | None = stable_attributes(files)
        self._scanned = frozenset(files)
        self.stable_used = False
        self.stable_broken = False
        #: the code objects of the translated functions (natively run code may not enter them)
        self._codes = {fc.func.__code__: fc.name for fc in program.funcs}
        #: the threads of the step being executed (for threads started by native code)
        self._stepping: list[_Thread] | None = None
        #: partial-order reduction (:mod:`absmc.component.reduction`), when set
        self.reduction: Reduction | None = Reduction(self) if reduce else None
        owned = program.owned_classes
        self._owned: Callable[[type], bool] = owned.__contains__
        self._original = {n: program.namespace.get(n, UNBOUND) for n in program.roots}
        memo: dict[int, Any] = {}
        for n in program.roots:
            if n in program.namespace:
                program.namespace[n] = convert(program.namespace[n], memo)
        frame = self._bind(entry, tuple(args), dict(kwargs or {}))
        main = _Thread("main", None, 0, [[entry.index, 0, frame, 0]], False)
        #: the last successor encoded kept every object's number, for every state of its
        #: memo key (:func:`absmc.component.changes.encode_changes`)
        self.same_numbers = False
        #: the decoder of the last step, whose objects the next step reuses
        #: (:meth:`Decoder.rebase`)
        self._live: Decoder | None = None
        self._initial = self._encode([main])

    # -- Semantics protocol (the model interface) ---------------------------------------
    @property
    def properties(self) -> tuple[PropertyDesc, ...]:
        return _PROPERTIES

    @property
    def dependencies(self) -> None:
        """Unknown per label (:mod:`absmc.component.reduction` computes its own per state)."""
        return None

    def describe_state(self, s: State) -> dict[str, StateValue]:
        """As traces show ``s`` (:func:`absmc.component.trace.state_view`)."""
        from absmc.component.trace import state_view

        return state_view(self, s)

    def describe_step(self, label: int) -> str:
        tid, choice = divmod(label, LABELS)
        return f"thread {tid}" + (f" choice {choice}" if choice else "")

    @property
    def state_checks(self) -> bool:
        return False

    @property
    def initial(self) -> State:
        return self._initial

    def initial_states(self) -> list[State]:
        return [self._initial]

    def commands_of(self, label: int) -> tuple[int, ...]:
        return (label,)

    def ok(self, s: State) -> bool:
        return True

    def violated(self, s: State) -> list[int]:
        return []

    def valid_end(self, s: State) -> bool:
        threads = cast(Any, s)[2]
        return all(t[2] in ("D", "X") or t[4] for t in threads)

    def successors(self, s: State) -> Expansion:
        if self.reduction is not None:
            return self._reduced_successors(s)
        out: list[tuple[int, State]] = []
        fails: Failures = NO_FAILURES
        threads = cast(Any, s)[2]
        for tid in range(len(threads)):
            if threads[tid][2] in ("D", "X"):
                continue
            choice = 0
            while True:
                label = tid * LABELS + choice
                log = self.exec_log
                if log is not None:
                    log.clear()
                target, f, nalts = self._run(s, tid, choice, label)
                if f:
                    fails += f
                if self.on_transition is not None and log is not None:
                    self.on_transition(s, tid, target, list(log), bool(f))
                if target is not None:
                    out.append((label, target))
                choice += 1
                if choice >= nalts:
                    break
        return out, fails

    def _reduced_successors(self, s: State) -> Expansion:
        """Every thread's steps, then only those of the threads whose steps form a persistent
        set (:mod:`absmc.component.reduction`); the failures of all steps are reported."""
        reduction = self.reduction
        assert reduction is not None
        fails: Failures = NO_FAILURES
        threads = cast(Any, s)[2]
        by_thread: dict[int, dict[int, tuple[State | None, Failures]]] = {}
        env: set[int] = set()
        for tid in range(len(threads)):
            if threads[tid][2] in ("D", "X"):
                continue
            mine: dict[int, tuple[State | None, Failures]] = {}
            choice = 0
            calls = self.hidden_calls
            while True:
                label = tid * LABELS + choice
                target, f, nalts = self._run(s, tid, choice, label)
                if f:
                    fails += f
                mine[label] = (target, f)
                choice += 1
                if choice >= nalts:
                    break
            if self.hidden_calls != calls:
                env.add(tid)
            by_thread[tid] = mine
        keep = reduction.reduce(s, by_thread, env)
        out = [
            (label, t)
            for tid, mine in by_thread.items()
            if keep is None or tid in keep
            for label, (t, _) in mine.items()
            if t is not None
        ]
        return out, fails

    def step(self, label: int, s: State) -> tuple[State | None, Failures]:
        tid, choice = divmod(label, LABELS)
        threads = cast(Any, s)[2]
        if tid >= len(threads) or threads[tid][2] in ("D", "X"):
            return None, NO_FAILURES
        target, f, nalts = self._run(s, tid, choice, label)
        return (target if choice < max(nalts, 1) else None), f

    # -- encoding ------------------------------------------------------------------------
    def _encode(
        self, threads: list[_Thread], old: Decoder | None = None, src: State | None = None
    ) -> State:
        """The state of the live ``threads`` and objects; ``old``: the decoder of ``src``,
        the state the step started from."""
        self.same_numbers = False
        if old is not None and src is not None:
            out = encode_changes(threads, old, src, self.prog, self.opaque, self._owned)
            if out is not None:
                self.same_numbers = out[1]
                return out[0]
        e = Encoder(self.opaque, self._owned, old)
        enc = e.enc
        reenc = e.reenc
        ns = self.prog.namespace
        g = tuple([enc(ns.get(n, UNBOUND)) for n in self.prog.roots])
        c = tuple([enc(cell.cell_contents) for cell in self.prog.cells])
        tt = []
        for t in threads:
            st = t.status
            # the walk order (status, frames, handle) numbers the heap: keep it for both
            if t.lazy:
                if type(st) is tuple:
                    st = (st[0], reenc(st[1]), st[2], reenc(st[3]), reenc(st[4]))
                frames = t.enc
                if frames:
                    frames = tuple(
                        [
                            fr if (ls := reenc_seq(reenc, fr[2])) is fr[2] else (*fr[:2], ls, fr[3])
                            for fr in frames
                        ]
                    )
                tt.append(Hashed((t.name, reenc(t.handle), st, frames, t.daemon)))
                continue
            if type(st) is tuple:
                st = (st[0], enc(st[1]), st[2], enc(st[3]), enc(st[4]))
            frames = tuple([(fr[0], fr[1], enc_seq(enc, fr[2]), fr[3]) for fr in t.frames])
            h = reenc(t.handle) if t.henc else enc(t.handle)
            tt.append(Hashed((t.name, h, st, frames, t.daemon)))
        return cast(State, (g, c, tuple(tt), e.heap))

    def materialize(self, s: State, only: int = -1) -> tuple[Decoder, list[_Thread]]:
        """Live objects for ``s``: the tracked globals are written into the program's
        namespace and the cells; returns the decoder and the threads (with ``only >= 0``,
        only that thread's frames are materialized, the others keep their encoding, and the
        heap objects of the previous such call are reused: :meth:`Decoder.rebase`)."""
        g, c, tt, heap = cast(Any, s)
        d = self._live
        if only < 0 or d is None or not d.rebase(heap):
            d = Decoder(heap, self.opaque)
        if only >= 0:
            # a step's objects are kept for the next step (changed in place into its heap)
            self._live = d
        dec = d.dec
        ns = self.prog.namespace
        for n, v in zip(self.prog.roots, g, strict=True):
            x = dec(v)
            if x is UNBOUND:
                ns.pop(n, None)
            else:
                ns[n] = x
        for cell, v in zip(self.prog.cells, c, strict=True):
            cell.cell_contents = dec(v)
        threads: list[_Thread] = []
        for name, h, st, frames, daemon in tt:
            if only >= 0 and len(threads) != only:
                # handle, status and frames stay encoded (re-encoded by _encode)
                threads.append(_Thread(name, h, st, None, daemon, frames))
                continue
            if type(st) is tuple:
                st = (st[0], dec(st[1]), st[2], dec(st[3]), dec(st[4]))
            fr = [[f[0], f[1], dec_seq(dec, f[2]), f[3]] for f in frames]
            if only >= 0:
                threads.append(_Thread(name, h, st, fr, daemon, henc=True))
            else:
                threads.append(_Thread(name, dec(h), st, fr, daemon))
        return d, threads

    def restore(self) -> None:
        """Put the tracked globals back to their values before the check."""
        ns = self.prog.namespace
        for n, v in self._original.items():
            if v is UNBOUND:
                ns.pop(n, None)
            else:
                ns[n] = v

    # -- one step ------------------------------------------------------------------------
    def _bind(self, fc: FuncCode, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        nslots = len(fc.slots)
        if fc.simple and not kwargs and len(args) == fc.nparams:
            return [*args, *[UNBOUND] * (nslots - len(args))]
        if fc.signature is None:
            raise TypeError(f"cannot bind the arguments of {fc.name}")
        ba = fc.signature.bind(*args, **kwargs)
        ba.apply_defaults()
        loc: list[Any] = [UNBOUND] * nslots
        index = {n: i for i, n in enumerate(fc.slots)}
        for n, v in ba.arguments.items():
            loc[index[n]] = v
        return loc

    def thread_view(self, s: State) -> list[tuple[str, str, Any, int]]:
        """(name, status, top frame's function, line) of each thread of ``s`` (for traces)."""
        out = []
        for name, _, st, frames, _ in cast(Any, s)[2]:
            if frames:
                fr = frames[-1]
                fc = self.prog.funcs[fr[0]]
                out.append((name, _status_text(st), fc, fc.instrs[fr[1]].line))
            else:
                out.append((name, _status_text(st), None, 0))
        return out

    def next_instr(self, s: State, tid: int) -> tuple[FuncCode, Instr] | None:
        """The function and instruction thread ``tid`` executes next in ``s``."""
        frames = cast(Any, s)[2][tid][3]
        if not frames:
            return None
        fc = self.prog.funcs[frames[-1][0]]
        return fc, fc.instrs[frames[-1][1]]

    def _run(
        self, s: State, tid: int, choice: int, label: int
    ) -> tuple[State | None, Failures, int]:
        """Execute thread ``tid``'s next instruction with ``choice``: (successor or None when
        blocked, failures, number of choices). Steps are memoized
        (:mod:`absmc.component.memo`) unless instructions are logged or border calls kept."""
        if self.exec_log is not None or self.record or not self.memoize:
            return self._execute(s, tid, choice, label)
        table = self.memo.table(s)
        if table is None:
            # one thread has frames: the key would be the whole state, never met again
            return self._execute(s, tid, choice, label)
        key = step_key(s, tid, label)
        hit = table.get(key)
        if hit is not None:
            self.memo_hits += 1
            d, fails, nalts = hit
            return (None if d is None else memo_apply(s, tid, d)), fails, nalts
        calls = self.env_calls
        target, fails, nalts = self._execute(s, tid, choice, label)
        if self.env_calls == calls:
            if target is None:
                self.memo.remember(s, key, (None, fails, nalts))
            elif self.same_numbers:
                # every object kept its number (a step that swaps two objects moves no
                # encoded reference but would renumber the other threads' references)
                d = memo_delta(s, target, tid)
                if d is not None:
                    self.memo.remember(s, key, (d, fails, nalts))
        return target, fails, nalts

    def _execute(
        self, s: State, tid: int, choice: int, label: int
    ) -> tuple[State | None, Failures, int]:
        g = GUARD
        if g.owner < 0:
            # no check installed the guard (a search or replay of the semantics alone): this
            # step installs its own
            with self.guarded():
                return self._execute(s, tid, choice, label)
        d, threads = self.materialize(s, tid)
        th = threads[tid]
        fails: list[Failure] = []
        at = (th.frames[-1][0], th.frames[-1][1]) if th.frames else None
        self._stepping = threads
        g.depth += 1
        try:
            nalts = self._exec(threads, tid, th, choice, label, fails)
            if nalts == 1 and not fails:
                # both-mover steps of the same thread join this transition (joined.py)
                n = 0
                while th.status == 0 and th.frames and n < MAX_INVISIBLE:
                    if not self._invisible(th.frames[-1], len(th.frames)):
                        break
                    at = (th.frames[-1][0], th.frames[-1][1])
                    self._exec(threads, tid, th, 0, label, fails)
                    n += 1
        except NativeSyncUse as e:
            fr = th.frames[-1] if th.frames else None
            span = self._where(fr[0], fr[1]) if fr is not None else None
            if isinstance(e, (RealThreadStart, NativeComponentCall)):
                raise NativeUseError(str(e), span) from None
            raise NativeUseError(
                f"{e} used by code that runs natively (the environment or a "
                "lambda/comprehension of the component); the checker cannot schedule it",
                span,
            ) from None
        except NativeUseError as e:
            if e.span is None and at is not None:
                raise NativeUseError(e.message, self._where(*at)) from None
            raise
        finally:
            g.depth -= 1
            self._stepping = None
        if g.violation is not None:
            raise NativeUseError(g.violation, self._where(*at) if at is not None else None)
        if nalts == 0 or choice >= nalts:
            return None, tuple(fails), nalts
        return self._encode(threads, d, s), tuple(fails), nalts

    def guarded(self) -> contextlib.AbstractContextManager[Any]:
        """The guard of :mod:`absmc.component.guard` for this program (every thread and
        synchronization object created while a step runs is the checker's); a search or
        replay run inside it does not install it at every step."""
        return guarded(self.prog.namespace, CONSTRUCTORS, self._native_start)

    def _new_thread(self, name: str, handle: SyncHandle, daemon: bool) -> _Thread:
        return _Thread(name, handle, 0, [], daemon)

    def _where(self, fid: int, pc: int) -> SourceSpan:
        fc = self.prog.funcs[fid]
        ins = fc.instrs[pc]
        return SourceSpan(fc.file, ins.line, max(ins.col, 1))

    def _exec(
        self,
        threads: list[_Thread],
        tid: int,
        th: _Thread,
        choice: int,
        label: int,
        fails: list[Failure],
    ) -> int:
        st = th.status
        if type(st) is tuple:
            return self._wake(threads, tid, th, choice)
        frame = th.frames[-1]
        if self.exec_log is not None:
            self.exec_log.append((frame[0], frame[1]))
        funcs = self.prog.funcs
        fc = funcs[frame[0]]
        instrs = fc.instrs
        ins = instrs[frame[1]]
        loc = frame[2]
        try:
            op = ins.op
            if op == JUMP:  # not reached after jump threading, kept for safety
                frame[1] = ins.nxt
                return 1
            if op in (EXEC, FOR_NEXT):
                if op == FOR_NEXT:
                    seq, idx = loc[ins.dest], loc[ins.aux]
                    if idx >= len(seq):
                        frame[1] = ins.alt
                        return 1
                res = self._piece(ins, loc, fc)
                for slot, v in zip(ins.writes, res, strict=False):
                    loc[slot] = v
                if ins.cell_writes:
                    closure = fc.func.__closure__ or ()
                    for pos, k in ins.cell_writes:
                        closure[k].cell_contents = res[pos]
                frame[1] = ins.nxt
                return 1
            if op == BRANCH:
                frame[1] = ins.nxt if self._piece(ins, loc, fc) else ins.alt
                return 1
            if op == CALL:
                return self._call(threads, tid, th, frame, fc, ins, choice)
            if op == RETURN:
                value = self._piece(ins, loc, fc) if ins.fn is not None else None
                self._return(th, value)
                return 1
            if op == ASSERT:
                ok, msg = self._piece(ins, loc, fc)
                if ok:
                    frame[1] = ins.nxt
                    return 1
                text = msg() if msg is not None else None
                where = f"{fc.file}:{ins.line}"
                detail = f": {text}" if text is not None else ""
                fails.append(
                    Failure(
                        label,
                        f"assertion failed at {where} ({th.name}): {ins.text}{detail}",
                        ASSERT_PROPERTY,
                    )
                )
                raise _Raise(AssertionError(text) if text is not None else AssertionError())
            if op == MATCH:
                exc = loc[ins.dest]
                frame[1] = ins.nxt if isinstance(exc, self._piece(ins, loc, fc)) else ins.alt
                return 1
            if op == RERAISE:
                raise _Raise(loc[ins.dest])
            if op == RAISE:
                exc, cause = self._piece(ins, loc, fc)
                if isinstance(exc, type):
                    exc = exc()
                if not isinstance(exc, BaseException):
                    raise TypeError("exceptions must derive from BaseException")
                if cause is not None:
                    exc.__cause__ = cause
                raise _Raise(exc)
            if op == DELETE:
                if loc[ins.dest] is UNBOUND:
                    raise UnboundLocalError(fc.slots[ins.dest])
                loc[ins.dest] = UNBOUND
                frame[1] = ins.nxt
                return 1
            raise AssertionError(f"unknown instruction {op}")
        except _Raise as r:
            self._unwind(th, r.args[0], label, fails)
            return 1
        except (KeyboardInterrupt, NativeSyncUse, UsageError, NativeUseError):
            raise
        except Exception as exc:
            self._unwind(th, exc, label, fails)
            return 1

    def _piece(self, ins: Instr, loc: list[Any], fc: FuncCode, kill: bool = True) -> Any:
        fn = ins.fn
        assert fn is not None
        for i in ins.reads:
            if loc[i] is UNBOUND:
                name = fc.slots[i]
                raise UnboundLocalError(
                    f"cannot access local variable '{name}' where it is not associated with a value"
                )
        args = [loc[i] for i in ins.slots]
        if ins.cells:
            closure = fc.func.__closure__ or ()
            for pos, k in ins.cells:
                args.insert(pos, closure[k].cell_contents)
        out = fn(*args)
        if kill:
            for k in ins.kills:
                loc[k] = UNBOUND
        return out

    def _unwind(self, th: _Thread, exc: BaseException, label: int, fails: list[Failure]) -> None:
        frames = th.frames
        first = frames[-1] if frames else None
        while frames:
            fr = frames[-1]
            h = self.prog.funcs[fr[0]].handler[fr[1]]
            if h is not None:
                fr[1] = h[0]
                fr[2][h[1]] = exc
                return
            frames.pop()
        th.status = "X"
        where = ""
        if first is not None:
            fc = self.prog.funcs[first[0]]
            where = f" at {fc.file}:{fc.instrs[first[1]].line}"
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        fails.append(Failure(label, f"uncaught {text}{where} ({th.name})", UNCAUGHT_PROPERTY))

    def _return(self, th: _Thread, value: Any) -> None:
        fr = th.frames.pop()
        if fr[3] == 1:
            value = fr[2][0]
        if not th.frames:
            th.status = "D"
            return
        caller = th.frames[-1]
        ins = self.prog.funcs[caller[0]].instrs[caller[1]]
        if ins.dest >= 0:
            caller[2][ins.dest] = value
        caller[1] = ins.nxt

    def _push(
        self,
        th: _Thread,
        fid: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        mode: int = 0,
        closure: tuple[Any, ...] | None = None,
    ) -> None:
        fc = self.prog.funcs[fid]
        loc = self._bind(fc, args, kwargs)
        if closure:  # a nested function: its captured values
            for slot, cell in zip(fc.free_slots, closure, strict=True):
                loc[slot] = cell.cell_contents
        th.frames.append([fid, 0, loc, mode])

    def _call(
        self,
        threads: list[_Thread],
        tid: int,
        th: _Thread,
        frame: list[Any],
        fc: FuncCode,
        ins: Instr,
        choice: int,
    ) -> int:
        f, args, kwargs = self._piece(ins, frame[2], fc)
        prog = self.prog
        t = type(f)
        fid = None
        if t is types.FunctionType:
            fid = prog.fid_of.get(id(f))
            if fid is None and f.__closure__ is not None:
                fid = prog.nested_fid.get(f.__code__)
                if fid is not None:
                    self._push(th, fid, args, kwargs, closure=f.__closure__)
                    return 1
        elif t is types.MethodType:
            fid = prog.fid_of.get(id(f.__func__))
            if fid is not None:
                args = (f.__self__, *args)
        if fid is not None:
            self._push(th, fid, args, kwargs)
            return 1
        if t is SyncMethod:
            return self._sync(threads, tid, th, frame, ins, f, args, kwargs)
        if t is type and f in prog.classes:
            obj = f.__new__(f)
            init = f.__init__
            ifid = prog.fid_of.get(id(init))
            if ifid is not None:
                self._push(th, ifid, (obj, *args), kwargs, mode=1)
                return 1
            if init is REAL_THREAD.__init__:
                thread_init(obj, args, kwargs)
                return self._deliver(frame, ins, obj)
            init(obj, *args, **kwargs)
            return self._deliver(frame, ins, obj)
        ctor = CHECK_CONSTRUCTORS.get(f) if _hashable(f) else None
        if ctor is not None:
            return self._deliver(frame, ins, ctor(*args, **kwargs))
        if f is super and not args and not kwargs:
            return self._deliver(frame, ins, zero_arg_super(fc, frame))
        if t is types.MethodType and type(f.__self__) in prog.classes:
            tm = THREAD_METHODS.get(f.__func__)
            if tm is not None:
                obj = f.__self__
                return self._thread_method(threads, tid, th, frame, ins, obj, tm, args, kwargs)
        if f is time.sleep:
            return self._deliver(frame, ins, None)
        choices = prog.env_choices.get(f) if _hashable(f) else None
        if choices is not None:
            values = list(choices(*args, **kwargs) if callable(choices) else choices)
            if not values:
                return 0
            return self._deliver(frame, ins, values[min(choice, len(values) - 1)], len(values))
        return self._deliver(frame, ins, self._native(f, args, kwargs, fc, ins))

    def _deliver(self, frame: list[Any], ins: Instr, value: Any, nalts: int = 1) -> int:
        if ins.dest >= 0:
            frame[2][ins.dest] = value
        frame[1] = ins.nxt
        return nalts

    def _native(
        self, f: Any, args: tuple[Any, ...], kwargs: dict[str, Any], fc: FuncCode, ins: Instr
    ) -> Any:
        """One call into the environment: executed natively, atomically; with determinism
        checking, its input and output are compared with earlier calls of the same input."""
        self.env_calls += 1
        if self.reduction is not None and not closed_call(f, args, kwargs, self._owned):
            self.hidden_calls += 1
        if self.unstable is not None and not self.stable_broken:
            self.stable_broken = passes_objects(
                f, args, kwargs, self.prog.owned_classes, self._scanned
            )
        if isinstance(getattr(f, "__self__", None), REAL_TYPES):
            raise NativeUseError(
                f"{_callee_name(f)} of a real synchronization object the checker does not own "
                "(created before the check or by a library); the checker cannot schedule it",
                SourceSpan(fc.file, ins.line, max(ins.col, 1)),
            )
        watched = _watched(f)
        if not watched:
            return call_native(f, args, kwargs, self._codes)
        owned = self._owned
        key = (
            _callee_name(f),
            fingerprint((getattr(f, "__self__", None), args, kwargs), self.opaque, owned),
        )
        t0 = time.perf_counter()
        raised: BaseException | None = None
        result: Any = None
        try:
            result = call_native(f, args, kwargs, self._codes)
        except NativeSyncUse:
            raise
        except Exception as e:
            raised = e
        self.env_time += time.perf_counter() - t0
        out = fingerprint(
            (result, type(raised).__name__ if raised else None, args, kwargs), self.opaque, owned
        )
        before = self.env_outputs.setdefault(key, out)
        if before != out and len(self.nondeterministic) < 5:
            self.nondeterministic.append(
                f"{key[0]} called at {fc.file}:{ins.line} returned different results for the "
                "same input"
            )
        if self.record and key not in self.border:
            self.border[key] = BorderCall(
                getattr(f, "__module__", None) or "",
                getattr(f, "__qualname__", ""),
                repr(args),
                repr(kwargs),
                repr(result) if raised is None else None,
                type(raised).__name__ if raised is not None else None,
                f"{fc.file}:{ins.line}",
            )
        if raised is not None:
            raise raised
        return result

    # -- synchronization -----------------------------------------------------------------
    def _sync(
        self,
        threads: list[_Thread],
        tid: int,
        th: _Thread,
        frame: list[Any],
        ins: Instr,
        m: SyncMethod,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> int:
        def waiting(cond: SyncHandle, count: int, timed: bool, pred: Any) -> None:
            th.status = ("W", cond, count, timed, pred)

        def notify(tids: list[int]) -> None:
            for w in tids:
                ws = threads[w].status
                if type(ws) is tuple and ws[0] == "W":
                    woken = ENC_TRUE if threads[w].lazy else True
                    threads[w].status = ("N", ws[1], ws[2], woken, ws[4])

        def done(t: int) -> bool:
            return threads[t].status in ("D", "X")

        def start(h: SyncHandle) -> None:
            self._start_thread(threads, h)

        nalts, result, advance = sync_call(
            m.handle, m.name, args, kwargs, tid, waiting, notify, done, start
        )
        if nalts == 0:
            return 0
        if advance:
            if ins.dest >= 0:
                frame[2][ins.dest] = result
            frame[1] = ins.nxt
        return nalts

    def _wake(self, threads: list[_Thread], tid: int, th: _Thread, choice: int) -> int:
        """A thread waiting on a condition: time out (``W`` with a timeout), or reacquire
        the lock after a notification (``N``); ``wait_for`` re-tests its predicate."""
        kind, cond, count, extra, pred = th.status
        if kind == "W":
            if not extra:
                return 0
            waiters = cond.fields[1]
            if tid in waiters:
                waiters.remove(tid)
            th.status = ("N", cond, count, False, pred)
            return 1
        lock = cond.fields[0]
        if not lock_free_for(lock, tid):
            return 0
        take(lock, tid, count)
        th.status = 0
        frame = th.frames[-1]
        ins = self.prog.funcs[frame[0]].instrs[frame[1]]
        result = extra
        if pred is not None:
            try:
                result = pred()
            except Exception as e:
                self._unwind(th, e, tid * LABELS, [])
                return 1
            if not result and extra:
                # woken but the predicate is still false: wait again
                cnt = release_all(lock)
                cond.fields[1].append(tid)
                th.status = ("W", cond, cnt, False, pred)
                return 1
        if ins.dest >= 0:
            frame[2][ins.dest] = result
        frame[1] = ins.nxt
        return 1


def _status_text(st: Any) -> str:
    if st == 0:
        return "running"
    if st == "D":
        return "ended"
    if st == "X":
        return "died"
    return "waiting" if st[0] == "W" else "woken"


def _hashable(f: Any) -> bool:
    try:
        hash(f)
    except TypeError:
        return False
    return True


_UNWATCHED_SELF = (list, dict, set, str, bytes, bytearray, tuple, frozenset, int, float)


def _watched(f: Any) -> bool:
    """Calls whose results are compared across equal inputs (the environment's functions;
    methods of built-in containers are deterministic and not compared)."""
    self_ = getattr(f, "__self__", None)
    if self_ is None or isinstance(self_, types.ModuleType):
        return not isinstance(f, type)
    if isinstance(self_, _UNWATCHED_SELF):
        return False
    return not isinstance(self_, type)


def _callee_name(f: Any) -> str:
    mod = getattr(f, "__module__", None) or ""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    return f"{mod}.{name}" if mod else str(name)
