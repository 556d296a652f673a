"""Guarded commands, processes, properties and the System every engine consumes.

A :class:`System` is a transition system given as guarded commands over an ordered vector of
variables: a state is the tuple of the variables' values in declaration order (bools as 0/1).
The concrete semantics is the interleaving of all enabled commands of all processes; each
command is deterministic (its updates are *simultaneous*: every right-hand side is evaluated in
the old state).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final, Literal

from absmc.ir.ctl import CtlProperty
from absmc.ir.expr import TRUE, Const, Expr, Var
from absmc.ir.ltl import LtlProperty
from absmc.ir.printer import format_expr
from absmc.ir.sorts import BoolSort, RangeSort, Sort, is_control
from absmc.ir.span import SourceSpan
from absmc.ir.steps import NO_DEADLOCK as NO_DEADLOCK  # defined with the shapes every model shares
from absmc.ir.steps import NO_MODEL_ERROR as NO_MODEL_ERROR

PropertyKind = Literal["invariant", "unreachable", "assert"]
PROPERTY_KINDS: Final = ("invariant", "unreachable", "assert")
#: the property kinds checked on every stored state (``assert`` is checked on transitions)
STATE_PROPERTY_KINDS: Final = ("invariant", "unreachable")


@dataclass(frozen=True, slots=True)
class Print:
    """Output a command writes when it executes (Promela's ``printf``/``printm``; SPIN prints it
    in simulation runs only): ``format`` is SPIN's format string as written (escapes such as
    ``\\n`` not yet interpreted), ``args`` are expressions over the command's pre-state,
    ``names`` the mtype names by value for ``%e``. Searches ignore it."""

    format: str
    args: tuple[Expr, ...] = ()
    names: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Variable:
    """A state variable: name, sort and initial value (bools as 0/1)."""

    name: str
    sort: Sort
    init: int = 0
    span: SourceSpan | None = field(default=None, compare=False)

    @property
    def is_control(self) -> bool:
        """Finite ranges and bools are control; unbounded ints are data."""
        return is_control(self.sort)

    def ref(self) -> Var:
        """An IR expression referring to this variable."""
        return Var(self.name, self.sort)


@dataclass(frozen=True, slots=True)
class Process:
    """A process: its name and, when it has one, the name of its program-counter variable."""

    name: str
    pc: str | None = None
    span: SourceSpan | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Command:
    """A guarded command ``guard -> x1 := e1, ..., xn := en`` of one process.

    ``updates`` is a tuple of ``(variable name, expression)`` pairs, applied simultaneously; each
    name occurs at most once. ``index`` is the command's position in ``System.commands`` (set by
    :class:`System`). The GCL front end uses none of the following; the Promela front end needs
    them (SPIN's semantics), and every engine built on :mod:`absmc.codegen.python` honours them:

    * ``flags``: ``"timeout"`` — the command is considered only in states where no command
      without this flag is enabled (SPIN's ``timeout``: the guard was written with ``timeout``
      true). ``"priority"`` — the guard also requires that no process of a higher priority is
      enabled (Promela's process priorities): partial-order reduction treats no location of
      such a command as safe. Other strings are free-form markers.
    * ``exclusive``: after executing the command, the named process holds exclusive control
      (Promela's ``atomic``): the next step must be one of its commands; the state in between is
      *not* a stored state; only when that process has no enabled command there does the state
      become an ordinary (stored) state from which every process may move. Successor functions
      return such a chain of commands as one step (see :mod:`absmc.codegen.python`).
    * ``asserts``: ``(property name, condition over the pre-state)`` pairs: executing the command
      in a state where a condition is false violates that ``assert``-kind property (Promela's
      ``assert``); the command still executes (as SPIN with ``-c0``).
    * ``errors``: ``(condition, message)`` pairs: in a state where a condition holds, the command
      is a model error (e.g. an array index out of bounds) and is not executed; checked before
      the guard.
    * ``source_text``: the source statement(s) the command stands for, shown in traces instead
      of the guarded-command form when set.
    * ``prints``: output (:class:`Print`) written when the command executes, in order; only
      ``absmc simulate`` shows it.
    * ``chan_ops``: the channel operations the command performs, as ``(kind, channel id)``
      pairs (:class:`Channel`): ``"s"`` a FIFO send, ``"S"`` a sorted send, ``"r"`` a receive
      of the message at the head (or a copy of it), ``"R"`` a random receive, ``"l"`` a poll
      that the front end checks against both ``xr`` and ``xs`` claims of another process (a
      model error when one holds: ``len``, ``full``, ``empty``), ``"n"`` one checked against an
      ``xs`` claim (``nfull``), ``"e"`` one checked against an ``xr`` claim (``nempty``),
      ``"p"`` any other read or write of the channel (a poll ``c?[...]``, an ``else`` that
      tests it, the channel going with its process). Partial-order reduction uses them for
      SPIN's exclusive channels (:mod:`absmc.ir.dependency`); a command that touches a
      channel's variables without naming it here is treated as any other access. ``"?"``
      (channel 0): some channel operation not recorded (a rendezvous partner's guard in an
      ``else``).
    """

    process: str
    guard: Expr
    updates: tuple[tuple[str, Expr], ...]
    label: str | None = None
    span: SourceSpan | None = field(default=None, compare=False)
    index: int = -1
    flags: frozenset[str] = frozenset()
    exclusive: str | None = None
    asserts: tuple[tuple[str, Expr], ...] = ()
    errors: tuple[tuple[Expr, str], ...] = ()
    source_text: str | None = field(default=None, compare=False)
    prints: tuple[Print, ...] = field(default=(), compare=False)
    chan_ops: tuple[tuple[str, int], ...] = ()

    def format_updates(self) -> str:
        """The right-hand side in GCL syntax (``skip`` when there are no updates)."""
        if not self.updates:
            return "skip"
        return ", ".join(f"{n} := {format_expr(e)}" for n, e in self.updates)

    def text(self) -> str:
        """The command in GCL syntax, with its label."""
        label = f"{self.label}: " if self.label else ""
        return f"{label}{format_expr(self.guard)} -> {self.format_updates()}"

    @property
    def assigned(self) -> frozenset[str]:
        """Names of the variables this command assigns."""
        return frozenset(n for n, _ in self.updates)

    def update_map(self) -> dict[str, Expr]:
        """The updates as a ``{name: expression}`` mapping (for substitution / wp)."""
        return dict(self.updates)


@dataclass(frozen=True, slots=True)
class Property:
    """A named safety property.

    * ``invariant``: ``expr`` must hold in every reachable state;
    * ``unreachable``: no reachable state satisfies ``expr`` (an error condition);
    * ``assert``: checked on transitions: every command whose ``asserts`` name the property
      must find its condition true when it executes (``expr`` is the asserted expression as
      written, for display).
    """

    name: str
    kind: PropertyKind
    expr: Expr
    span: SourceSpan | None = field(default=None, compare=False)
    #: the property as its source writes it (an assertion's argument), for messages where an
    #: instance's condition folded to a constant (Promela's ``assert(_pid < 3)`` in pid 3)
    text: str = field(default="", compare=False)

    def shown(self, instance: Expr) -> str:
        """How a violation message shows ``instance`` (this property's condition as a command
        checks it): the expression, or the source text where it folded to a constant."""
        if isinstance(instance, Const) and self.text:
            return self.text
        return format_expr(instance)

    @property
    def bad(self) -> Expr:
        """The condition a violating state satisfies."""
        from absmc.ir.expr import neg

        return neg(self.expr) if self.kind == "invariant" else self.expr


@dataclass(frozen=True, slots=True)
class Channel:
    """A buffered channel of the model (Promela's ``chan c = [capacity] of {...}``): its id
    (the value a channel variable holds), ``capacity`` (> 0), ``length`` (the state variable
    holding the number of messages) and ``variables`` (every state variable of its contents,
    ``length`` included)."""

    cid: int
    name: str
    capacity: int
    length: str
    variables: frozenset[str]


@dataclass(frozen=True, slots=True)
class ChannelClaim:
    """Promela's ``xr``/``xs`` declaration (``kind``): while the process ``process`` runs the
    proctype that declares it (``alive``, a condition on its pc), it is the only receiver
    (``xr``) or sender (``xs``) of the channel held in the state variable ``var``. The front end
    makes every other process's receive (``xr``) or send (``xs``) on that channel a model error,
    as pan does ("xr/xs assertion violated"), so partial-order reduction may rely on it.
    ``channel``: the claimed channel's id, a constant or a state variable (read at every use:
    partial-order reduction checks that nothing writes it while it relies on the claim)."""

    process: str
    kind: Literal["xr", "xs"]
    channel: Expr
    alive: Expr


@dataclass(frozen=True)
class System:
    """A model: ordered variables, processes, guarded commands, properties and seed predicates.

    ``valid_end`` (default ``None``: never) describes terminal states that are *not* deadlocks
    (Promela's valid end states). ``ltl`` holds the linear-time properties (``ltl`` blocks,
    ``never`` claims; :mod:`absmc.ir.ltl`), checked by a product search, not on states.
    ``init_constraint`` (GCL ``init: EXPR;``; ``None``: none) makes every state satisfying it
    whose variables not mentioned in it have their declared initial value an initial state (see
    :mod:`absmc.kernel.model.initial` for the enumeration); ``ctl`` are the model's CTL properties
    (:mod:`absmc.ir.ctl`); ``reductions`` name the state-space reductions the front end built
    into the commands (``"dead-variable-reset"``: :mod:`absmc.lang.promela.deadvars`);
    ``channels`` and ``claims`` describe Promela's buffered channels and ``xr``/``xs``
    declarations (:class:`Channel`, :class:`ChannelClaim`; empty for other front ends).
    ``pids_unobserved``: the Promela front end's promise that no expression observes which pid
    (process slot) a process gets or how many processes run (no ``_pid``, ``_nr_pr``, remote
    reference, value of ``run``, local channel): partial-order reduction may then let a death
    and a ``run`` racing for a slot go in either order (:mod:`absmc.ir.dependency`,
    docs/reductions.md); ``False`` for other front ends. ``max_created``: at most this many
    processes are created in one execution, the initial ones included (``None``: no bound
    known; the Promela front end's when no ``run`` lies on a cycle and no proctype creates
    itself). ``swappable``: pairs ``(pc variable, value)``: the program-counter values a
    ``run`` gives a slot when it starts a process that may trade slots with another such
    process (the Promela front end's :func:`absmc.lang.promela.creation.swappable_types`: it
    never ends, reads no ``_pid``, owns no channel, and no statement names a process by its
    pid): partial-order reduction may then let two creators' ``run`` statements of such
    processes go in either order (docs/reductions.md, "Two runs racing for a slot"). ``once``: the
    program-counter variables of slots a process fills at most once per execution (the
    proctypes the slot can hold are created at most once in all). ``singles``: tuples ``(pc
    variable, proctype, first, last)``: the program-counter values (``first`` to ``last``)
    of a proctype that is created at most once in all, in that slot (two slots never hold
    such a process at once). Raises
    ``ValueError`` on internally inconsistent input (duplicate variable names, commands of
    unknown processes, updates of unknown variables); front ends report user errors before
    building a System.
    """

    variables: tuple[Variable, ...]
    processes: tuple[Process, ...]
    commands: tuple[Command, ...]
    properties: tuple[Property, ...] = ()
    predicates: tuple[Expr, ...] = ()
    name: str = ""
    file: str = ""
    valid_end: Expr | None = None
    ltl: tuple[LtlProperty, ...] = ()
    init_constraint: Expr | None = None
    ctl: tuple[CtlProperty, ...] = ()
    reductions: tuple[str, ...] = ()
    channels: tuple[Channel, ...] = ()
    claims: tuple[ChannelClaim, ...] = ()
    pids_unobserved: bool = False
    max_created: int | None = None
    swappable: frozenset[tuple[str, int]] = frozenset()
    once: frozenset[str] = frozenset()
    singles: frozenset[tuple[str, str, int, int]] = frozenset()

    def __post_init__(self) -> None:
        names = [v.name for v in self.variables]
        if len(set(names)) != len(names):
            raise ValueError("duplicate variable names")
        procs = {p.name for p in self.processes}
        known = set(names)
        fixed: list[Command] = []
        for i, c in enumerate(self.commands):
            if c.process not in procs:
                raise ValueError(f"command {i} belongs to unknown process {c.process!r}")
            for n, _ in c.updates:
                if n not in known:
                    raise ValueError(f"command {i} assigns unknown variable {n!r}")
            if len({n for n, _ in c.updates}) != len(c.updates):
                raise ValueError(f"command {i} assigns a variable twice")
            fixed.append(c if c.index == i else _with_index(c, i))
        object.__setattr__(self, "commands", tuple(fixed))

    @cached_property
    def index_of(self) -> Mapping[str, int]:
        """Variable name -> its position in the state tuple."""
        return {v.name: i for i, v in enumerate(self.variables)}

    @cached_property
    def by_name(self) -> Mapping[str, Variable]:
        """Variable name -> declaration."""
        return {v.name: v for v in self.variables}

    def var(self, name: str) -> Variable:
        """The declaration of ``name``; raises ``KeyError`` when undeclared."""
        return self.by_name[name]

    def ref(self, name: str) -> Var:
        """An IR reference to the declared variable ``name``."""
        return self.by_name[name].ref()

    def initial_state(self) -> tuple[int, ...]:
        """The initial state as a tuple of ints in declaration order."""
        return tuple(v.init for v in self.variables)

    def commands_of(self, process: str) -> tuple[Command, ...]:
        """The commands of one process, in declaration order."""
        return tuple(c for c in self.commands if c.process == process)

    def get_property(self, name: str) -> Property:
        """The property called ``name``; raises ``KeyError`` when there is none."""
        for p in self.properties:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def control_vars(self) -> tuple[Variable, ...]:
        """Finite-range and bool variables (never abstracted by default)."""
        return tuple(v for v in self.variables if v.is_control)

    @property
    def data_vars(self) -> tuple[Variable, ...]:
        """Unbounded integer variables (what abstraction methods abstract by default)."""
        return tuple(v for v in self.variables if not v.is_control)

    def state_dict(self, state: tuple[int, ...]) -> dict[str, int | bool]:
        """A state tuple as ``{name: value}`` with bools as Python bools (for output)."""
        out: dict[str, int | bool] = {}
        for v, x in zip(self.variables, state, strict=True):
            out[v.name] = bool(x) if isinstance(v.sort, BoolSort) else int(x)
        return out

    def with_(self, **changes: object) -> System:
        """A copy with some fields replaced (commands are re-indexed)."""
        from dataclasses import replace

        return replace(self, **changes)  # type: ignore[arg-type]

    def domain_constraint(self, name: str) -> Expr:
        """``lo <= x && x <= hi`` for a finite-range variable, ``true`` otherwise."""
        from absmc.ir.expr import conj, const, op

        v = self.by_name[name]
        if isinstance(v.sort, RangeSort):
            x = v.ref()
            return conj([op("<=", const(v.sort.lo), x), op("<=", x, const(v.sort.hi))])
        return TRUE


def _with_index(c: Command, i: int) -> Command:
    from dataclasses import replace

    return replace(c, index=i)


def make_system(
    variables: Iterable[Variable],
    processes: Iterable[Process],
    commands: Iterable[Command],
    properties: Iterable[Property] = (),
    predicates: Iterable[Expr] = (),
    name: str = "",
    file: str = "",
) -> System:
    """Convenience constructor taking any iterables."""
    return System(
        tuple(variables),
        tuple(processes),
        tuple(commands),
        tuple(properties),
        tuple(predicates),
        name,
        file,
    )
