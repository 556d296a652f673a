"""Random small Promela models as text (seeded ``random.Random``), for differential tests.

One module, two flavours (GCL models are :mod:`tests.generators`); both draw variables the same
way (:meth:`_Gen.var`), join statements the same way (:meth:`_Gen.seq`) and keep values below
4 (``% 4``), so state spaces are small enough for an exhaustive search as the oracle; asserts
and blocking statements give violations and deadlocks. The same seed always gives the same text.

* :func:`random_promela` (the Promela front end's reductions, SPIN's dead-variable reset:
  :mod:`tests.test_promela_deadvars`): two or three active processes whose locals are read and
  written in every way SPIN's data-flow analysis distinguishes: conditions, assignments (also
  ``v = 0``), sends and receives (also ``eval``), ``assert``, ``printf``, ``if``/``do`` with
  ``else`` and ``break``, ``atomic`` and ``d_step`` blocks, ``goto`` and labels, and globals.
* :func:`random_promela_por` (partial-order reduction: :mod:`tests.test_por`): two or three
  process types (some with several instances) with local and global variables, a buffered or
  rendezvous channel (or none), ``if``/``do`` with ``else``, ``atomic`` blocks, assertions over
  locals and globals, ``timeout``, ``run`` of a helper process, blocking guards (invalid end
  states), and SPIN's exclusive channels: a second buffered channel and ``xr``/``xs``
  declarations (sometimes broken by another process's receive or send, or by two claims: pan's
  "xr/xs assertion violated" model errors), and polls of both channels (``len``, ``full``,
  ``empty``, ``nfull``, ``nempty``: a model error where another process claims the channel;
  the claimant's ``nfull``/``nempty`` and another's ``nfull`` of an ``xr``, ``nempty`` of an
  ``xs`` channel are SPIN's conditionally safe polls); with exclusive channels the helper
  process takes a channel parameter ``q`` (``run H(c)``) that it may claim and use.
* :func:`random_promela_runs` (partial-order reduction of process creation and death:
  :mod:`tests.test_por`): ``init`` or a spawner process runs workers, each handed a channel
  that its creator declares locally (rendezvous or buffered: a dynamic local channel); a worker
  may run a worker of its own (bounded recursion, as SPIN's calculator.pml), sends its result
  to its creator and dies (so ``run``s race with deaths for process slots); some workers never
  end, some assert on ``_pid`` (so a reduction that fixes which slot a ``run`` takes would miss
  a violation).
* :func:`random_promela_races` (the same, for the rule that lets a death and a ``run`` racing
  for a slot go in either order, docs/reductions.md: :mod:`tests.test_por`): models that
  observe no pid, so the rule applies: ``init`` or an active spawner runs one to three workers at
  places of its sequence (none in a loop), a worker may run one of the other type, workers read
  and write globals and a global channel (buffered or rendezvous) or none, assert on globals,
  block, and end (so their deaths race with the runs); now and then a model with a ``run`` in
  a loop, where only part of the rule applies; and SPIN's calculator.pml in small: workers
  that read a token of a global channel, may run a worker of their own with a local channel
  and send their result to their creator's (local channels, recursive creation bounded by the
  tokens).
"""

from __future__ import annotations

import random

__all__ = ["random_promela", "random_promela_por", "random_promela_races", "random_promela_runs"]


class _Gen:
    """What both flavours share: the variable names, how a variable is drawn, and sequences."""

    locals: tuple[str, ...]
    globals: tuple[str, ...]
    local_bias: float

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def var(self, local_bias: float | None = None) -> str:
        """A local (with probability ``local_bias``, default the flavour's) or a global."""
        r = self.rng
        bias = self.local_bias if local_bias is None else local_bias
        return r.choice(self.locals) if r.random() < bias else r.choice(self.globals)

    def stmt(self, depth: int) -> str:
        raise NotImplementedError

    def seq(self, depth: int, n: int = 3) -> str:
        """One to ``n`` statements of nesting at most ``depth``, joined by ``;``."""
        return "; ".join(self.stmt(depth) for _ in range(self.rng.randint(1, n)))


class _DeadVarsGen(_Gen):
    locals = ("x", "y", "z")
    globals = ("g", "h")
    local_bias = 0.75

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.labels = 0

    def expr(self, depth: int = 1) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.4:
            return self.var() if r.random() < 0.75 else str(r.randint(0, 3))
        op = r.choice(["+", "-", "*"])
        return f"(({self.expr(depth - 1)} {op} {self.expr(depth - 1)}) % 4)"

    def cond(self) -> str:
        r = self.rng
        op = r.choice(["==", "!=", "<", ">="])
        return f"{self.expr()} {op} {self.expr(0)}"

    def stmt(self, depth: int) -> str:
        r = self.rng
        k = r.randrange(14 if depth > 0 else 8)
        if k <= 2:
            v = self.var()
            rhs = "0" if r.random() < 0.15 else self.expr()
            return f"{v} = {rhs}"
        if k == 3:
            return f"({self.cond()})"
        if k == 4:
            return f"assert({self.cond()})" if r.random() < 0.5 else f"assert({self.var()} < 4)"
        if k == 5:
            return f'printf("%d\\n", {self.var()})'
        if k == 6:
            return f"c!{self.expr()}" if r.random() < 0.5 else f"nfull(c) -> c!{self.var()}"
        if k == 7:
            if r.random() < 0.3:
                return f"c?eval({self.var()})"
            return f"nempty(c) -> c?{r.choice(self.locals)}"
        if k in (8, 9):  # options start with a simple statement (one `else` per state)
            opts = [f"{self.stmt(0)}; {self.seq(depth - 1)}" for _ in range(r.randint(1, 3))]
            if r.random() < 0.4:
                opts.append("else -> " + self.seq(depth - 1))
            body = " ".join(f":: {o}" for o in opts)
            return f"if {body} fi"
        if k == 10:
            opts = [f"{self.cond()} -> {self.seq(depth - 1)}" for _ in range(r.randint(1, 2))]
            opts.append(f"{r.choice(['else', self.cond()])} -> break")
            body = " ".join(f":: {o}" for o in opts)
            return f"do {body} od"
        if k == 11:
            return f"atomic {{ {self.seq(depth - 1)} }}"
        if k == 12:
            # a guard first, then assignments (pan stops at a d_step that blocks inside)
            parts = [f"({self.cond()})"] if r.random() < 0.4 else []
            parts += [f"{self.var()} = {self.expr()}" for _ in range(r.randint(1, 3))]
            return f"d_step {{ {'; '.join(parts)} }}"
        self.labels += 1
        lab = f"L{self.labels}"
        return f"{lab}: {self.var()} = {self.expr()}; if :: {self.cond()} -> goto {lab} :: skip fi"

    def model(self) -> str:
        r = self.rng
        lines = ["byte g, h;", "chan c = [2] of { byte };"]
        for p in range(r.randint(2, 3)):
            decls = " ".join(f"byte {v} = {r.randint(0, 2)};" for v in self.locals)
            body = "; ".join(self.seq(2) for _ in range(r.randint(1, 3)))
            lines.append(f"active proctype P{p}() {{ {decls} {body} }}")
        return "\n".join(lines) + "\n"


class _PorGen(_Gen):
    locals = ("l0", "l1")
    globals = ("g0", "g1")
    local_bias = 0.7

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.chan = rng.random() < 0.7
        self.rendezvous = self.chan and rng.random() < 0.3
        self.helper = rng.random() < 0.3
        self.chans = ["c"]
        self.xu = False
        if self.chan and not self.rendezvous and rng.random() < 0.5:
            self.xu = True
            if rng.random() < 0.6:
                self.chans.append("d")

    def ch(self) -> str:
        return self.rng.choice(self.chans)

    def claims(self) -> str:
        r = self.rng
        if not self.xu:
            return ""
        out = []
        for ch in self.chans:
            if r.random() < 0.4:
                out.append(f"xr {ch}; ")
            if r.random() < 0.4:
                out.append(f"xs {ch}; ")
        return "".join(out)

    def expr(self) -> str:
        r = self.rng
        a = self.var()
        k = r.randint(0, 3)
        return r.choice([a, f"({a} + {k}) % 4", f"({a} + {self.var()}) % 4", str(k)])

    def cond(self) -> str:
        r = self.rng
        return f"{self.var()} {r.choice(['<', '<=', '==', '!=', '>'])} {r.randint(0, 3)}"

    def stmt(self, depth: int) -> str:
        r = self.rng
        k = r.randrange(14 if depth > 0 else 9)
        if k <= 2:
            return f"{self.var()} = {self.expr()}"
        if k == 3:
            return f"{self.var(0.3)} = {self.expr()}"
        if k == 4:
            return f"assert({self.cond()} || {self.cond()})"
        if k == 5:
            if self.chan and not self.rendezvous and r.random() < 0.5:
                ch = self.ch()
                polls = [f"len({ch}) > 0", f"full({ch})", f"empty({ch})", f"nfull({ch})"]
                return f"{r.choice([*polls, f'nempty({ch})'])} -> skip"
            return f"{self.cond()} -> skip" if r.random() < 0.7 else "skip"
        if k == 6 and self.chan:
            return f"{self.ch()}!{self.var()}"
        if k == 7 and self.chan:
            return f"{self.ch()}?{r.choice(self.locals)}"
        if k == 8:
            return "timeout -> skip" if r.random() < 0.2 else f"{r.choice(self.locals)}++"
        if k == 9:
            return f"atomic {{ {self.seq(depth - 1, 2)} }}"
        if k == 10:
            return f"if :: {self.cond()} -> {self.seq(depth - 1, 2)} :: else -> {self.stmt(0)} fi"
        if k == 11:
            x = r.choice(self.locals)
            return f"do :: {x} < {r.randint(1, 3)} -> {x}++; {self.stmt(0)} :: else -> break od"
        if k == 12 and self.helper:
            # with exclusive channels, H claims its channel parameter: the claim variable
            # holds a copy of a global channel variable (absmc's value sets follow the copy)
            return f"run H({r.choice(self.chans)})" if self.xu else "run H()"
        return f"{self.var()} = {self.expr()}"

    def proc(self, name: str, count: int) -> str:
        active = f"active [{count}] " if count > 1 else "active "
        body = self.seq(2, 5)
        return f"{active}proctype {name}() {{ byte l0, l1; {self.claims()}{body} }}"

    def model(self) -> str:
        r = self.rng
        lines = ["byte g0, g1;"]
        if self.chan:
            lines.append(f"chan c = [{0 if self.rendezvous else r.randint(1, 2)}] of {{ byte }};")
        if "d" in self.chans:
            lines.append(f"chan d = [{r.randint(1, 2)}] of {{ byte }};")
        for i in range(r.randint(2, 3)):
            lines.append(self.proc(f"P{i}", r.choice([1, 1, 2])))
        if self.helper:
            self.helper = False  # H runs no process
            if self.xu:
                self.chans = ["q", *self.chans]
                lines.append(
                    f"proctype H(chan q) {{ byte l0, l1; {self.claims()}{self.seq(1, 3)} }}"
                )
            else:
                lines.append(f"proctype H() {{ byte l0, l1; {self.claims()}{self.seq(1, 3)} }}")
        return "\n".join(lines) + "\n"


def random_promela(seed: int) -> str:
    """The Promela text of ``seed`` for the dead-variable tests (deterministic)."""
    return _DeadVarsGen(random.Random(seed)).model()


def random_promela_por(seed: int) -> str:
    """The Promela text of ``seed`` for the partial-order reduction tests (deterministic)."""
    return _PorGen(random.Random(seed)).model()


class _RunsGen(_PorGen):
    """:func:`random_promela_runs`: _PorGen's statements over locals and globals (no global
    channel), with process creation and death."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.chan = self.rendezvous = self.helper = self.xu = False

    def work(self, nested: bool) -> str:
        """A worker's body: statements, perhaps a worker of its own, the result sent back."""
        r = self.rng
        parts = [self.seq(1, 2)]
        if nested:
            parts.append("run V(me); me?l1")
        if r.random() < 0.25:
            parts.append(f"assert(_pid != {r.randint(1, 3)})")
        if r.random() < 0.15:
            parts.append("do :: g0 < 3 -> g0++ :: g0 >= 3 -> l0 = (l0 + 1) % 4 od")
        parts.append("r!l0")
        return "; ".join(parts)

    def model(self) -> str:
        r = self.rng
        chan = f"chan me = [{r.choice([0, 0, 1])}] of {{ byte }}"
        lines = [
            "byte g0, g1;",
            f"proctype V(chan r) {{ byte l0, l1; {self.work(False)} }}",
            f"proctype W(chan r) {{ byte l0, l1; {chan}; {self.work(r.random() < 0.5)} }}",
        ]
        spawn = [f"run {r.choice('VW')}(me)" for _ in range(r.randint(1, 2))]
        waits = [f"me?{r.choice(self.locals)}" for _ in spawn]
        pairs = [x for p in zip(spawn, waits, strict=True) for x in p]
        order = [*spawn, *waits] if r.random() < 0.5 else pairs
        body = f"byte l0, l1; {chan}; {'; '.join(order)}; {self.seq(1, 2)}"
        if r.random() < 0.5:
            lines.append(f"active proctype S() {{ {body} }}")
            lines.append(f"init {{ byte l0, l1; {self.seq(1, 2)} }}")
        else:
            lines.append(f"init {{ {body} }}")
        return "\n".join(lines) + "\n"


def random_promela_runs(seed: int) -> str:
    """The Promela text of ``seed`` for the process-creation reduction tests (deterministic)."""
    return _RunsGen(random.Random(seed)).model()


class _RacesGen(_PorGen):
    """:func:`random_promela_races`: _PorGen's statements over locals, globals and a global
    channel (no ``xr``/``xs``, no helper), with process creation and death and no pid
    observed."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.helper = self.xu = False
        self.chans = ["c"]

    def tokens(self) -> str:
        """SPIN's calculator.pml in small: a worker T reads a token of ``tok`` and may then run
        a T of its own with its local channel ``me`` (rendezvous or buffered), whose result it
        receives; it sends its own result to its creator's channel. Local channels and
        recursive creation, bounded by the tokens ``init`` sends."""
        r = self.rng
        me = f"chan me = [{r.choice([0, 0, 1])}] of {{ byte }}"
        lines = ["byte g0, g1;", "chan tok = [3] of { byte };"]
        if self.chan:
            lines.append(f"chan c = [{0 if self.rendezvous else r.randint(1, 2)}] of {{ byte }};")
        lines.append(
            f"proctype T(chan up) {{ byte l0, l1; {me}; if :: tok?l0 -> run T(me); me?l1"
            f" :: tok?l0 -> {self.stmt(0)} fi; {self.seq(1, 2)}; up!l0 }}"
        )
        sends = "; ".join(f"tok!{r.randint(0, 3)}" for _ in range(r.randint(1, 3)))
        sets = "; ".join(f"{r.choice(self.globals)} = {self.expr()}" for _ in range(2))
        lines.append(f"init {{ byte l0, l1; {me}; {sends}; run T(me); me?l0; {sets} }}")
        return "\n".join(lines) + "\n"

    def model(self) -> str:
        r = self.rng
        if r.random() < 0.3:
            return self.tokens()
        lines = ["byte g0, g1;"]
        if self.chan:
            lines.append(f"chan c = [{0 if self.rendezvous else r.randint(1, 2)}] of {{ byte }};")
        lines.append(f"proctype V() {{ byte l0, l1; {self.seq(1, 3)} }}")
        if r.random() < 0.4:
            # a worker that runs a worker: the front end asks that its runs not depend on its
            # choices, so it only assigns
            sets = [f"{self.var()} = {self.expr()}" for _ in range(3)]
            w = f"{sets[0]}; run V(); {sets[1]}; {sets[2]}"
        else:
            w = self.seq(1, 3)
        lines.append(f"proctype W() {{ byte l0, l1; {w} }}")
        parts = [self.seq(1, 2) for _ in range(r.randint(1, 3))]
        for _ in range(r.randint(1, 3)):
            parts.insert(r.randint(0, len(parts)), f"run {r.choice('VW')}()")
        if r.random() < 0.1:  # a run in a loop: no creation bound, the rule is off
            parts.append("do :: g1 < 2 -> g1++; run V() :: else -> break od")
        body = f"byte l0, l1; {'; '.join(parts)}"
        # the spawner is init or an active process (with no init: one that died before the
        # spawner's run would give the new process a pid absmc's slots cannot hold)
        name = "init" if r.random() < 0.6 else "active proctype S()"
        lines.append(f"{name} {{ {body} }}")
        return "\n".join(lines) + "\n"


def random_promela_races(seed: int) -> str:
    """The Promela text of ``seed`` for the death-and-run race tests (deterministic)."""
    return _RacesGen(random.Random(seed)).model()


def random_promela_swaps(seed: int) -> str:
    """The Promela text of ``seed`` for the run-and-run race tests (deterministic): two
    creators start workers that never end (``do`` loops without ``break``) over globals and a
    global channel, one of them storing a worker's pid (``wid = run W()``); now and then the
    stored pid is read (an assertion), a worker reads ``_pid`` or ends, so that the rule
    (docs/reductions.md, "Two runs racing for a slot") is off, and assertions over the
    globals may fail."""
    r = random.Random(seed)
    cap = r.choice([0, 1, 2])
    opts = [
        "atomic { g0 < 2 -> g0++ }",
        "atomic { g0 > 0 -> g0-- }",
        "g1 = 1 - g1",
        "l0 = g1",
        "l0 == 1 -> g1 = 0",
        "c!g1",
        "c?l0",
        f"assert(g0 + g1 < {r.randint(2, 4)})",
        "atomic { g0 == 1 -> g1 = 1 }",
    ]
    lines = ["byte g0, g1, wid;", f"chan c = [{cap}] of {{ byte }};"]
    for name in ("W", "U"):
        alts = r.sample(opts, r.randint(2, 3))
        if r.random() < 0.1:
            alts.append("_pid == 6 -> g1 = 1")  # reads its pid: not swappable
        end = "; g0 = 0" if r.random() < 0.1 else ""
        body = " ".join(f":: {a}" for a in alts)
        brk = " :: g1 == 1 -> break" if end else ""
        lines.append(f"proctype {name}() {{ byte l0; do {body}{brk} od{end} }}")
    # the creators may go on forever (then they never die and their deaths do not race)
    first = "run W(); run U()"
    first = f"atomic {{ {first} }}" if r.random() < 0.6 else first
    loop = "; do :: skip od" if r.random() < 0.5 else ""
    lines.append(f"proctype A() {{ {first}{loop} }}")
    second = r.choice(["wid = run W()", "wid = run U(); run W()", "run U()"])
    if r.random() < 0.6:  # a global written in the same step: B's location is not safe
        second = f"atomic {{ g1 = 1; {second} }}"
    loop = "; do :: skip od" if r.random() < 0.5 else ""
    lines.append(f"proctype B() {{ {second}; {r.choice(['g0 = 1', 'skip', 'g1 = 0'])}{loop} }}")
    start = "run A(); run B()"
    # reads the stored pid (the rule is off): B first gives its worker slot 3 or 4
    tail = f"; g1 == 1; assert(wid != {r.randint(3, 5)})" if r.random() < 0.4 else ""
    init = f"atomic {{ {start} }}" if r.random() < 0.5 else start
    lines.append(f"init {{ {init}{tail} }}")
    return "\n".join(lines) + "\n"
