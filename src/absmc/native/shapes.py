"""One C function per shape of command code, for Systems of many commands.

A rendezvous send on a Promela channel variable is one joint command per receive that may be
on the same channel, so a model that passes channels around has thousands of commands whose
C (:meth:`absmc.native.cgen.CGen.command`) differs only in integer constants: slots, program
counter values, command indices. gcc's time grows with the code (at ``-O0`` too) and is then
most of the model-to-verdict time. :func:`share` replaces such a command's code by a call of a
*shape function*, its code with each integer literal read from a row of constants (``q[j]``,
``int64_t``, the same values) and ``return`` for the jump past the command; commands of one
shape share the function, their rows form one table. SPIN's ``Examples/mobile1.pml``: 3,091
commands, 39 shapes; its C went from 1.64 MB to 0.76 MB (half of it tables) and gcc ``-O0``
from 6.1 s to 1.1 s of CPU.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from absmc.ir.expr import Expr, Op, conj, conjuncts, disj

__all__ = [
    "ROWS_MACRO",
    "SHARE_MIN_CHARS",
    "SHARE_MIN_COMMANDS",
    "TABULATE_MIN_RUN",
    "Shapes",
    "cond_switch",
    "factored",
    "render",
    "shape_functions",
    "share",
    "share_processes",
    "tabulate",
    "weaken",
]

#: a System of at least this many commands has its commands' code shared by shape; below,
#: each command's code keeps its constants in place (faster code at ``-O2``)
SHARE_MIN_COMMANDS = 1000

#: a System with fewer commands has them shared by shape when the code of its process functions
#: exceeds this many characters without (then generated again, with): SPIN's
#: ``Examples/LTL/leader.pml`` (five ``nnode`` processes, 160-bit channels): 343 KB of process
#: functions, each a copy of the others' code but for slots and indices; shared, its source went
#: from 0.50 MB to 0.29 MB (32 shapes) and gcc ``-O1`` from 4.9-6.9 s to 1.6-2.1 s of CPU, for a
#: search ~20-25% slower (~2 s of its ~9); with each call behind its guard tested in place
#: (:func:`share`'s ``enabled``): 0.37 MB, gcc ``-O1`` ~3.3 s against ~12 s unshared at load
#: 5-10, and about half of that loss in the search recovered
SHARE_MIN_CHARS = 200_000

#: shape (C with ``q[j]`` for its literals) -> (its number, the rows of literals of its commands)
Shapes = dict[str, tuple[int, list[list[str]]]]

#: an integer literal of the generated code (not part of a name, nor suffixed), or a
#: ``UINT64_C(...)`` word of a ``big_t`` constant (group 1: kept in place)
_LITERAL = re.compile(r"(UINT64_C\([^)]*\))|(?<![\w.])\d+(?![\w.])")

#: code that stays in place: 64-bit and 128-bit constants, 128-bit values
_UNSHARED = re.compile(r"(?<![\w])INT64_C\(|W128|__int128")

#: literals past this stay in place (a row is ``int64_t``)
_INT64_MAX = 2**63 - 1

#: the macro under which :func:`tabulate`'s tables replace the guarded calls they were made of
#: (defined at ``-O0``: :data:`absmc.native.build.LEVEL_FLAGS`)
ROWS_MACRO = "ABSMC_ROWS"

#: runs of fewer guarded calls stay as they are
TABULATE_MIN_RUN = 3

#: a guarded call of a shape function in a process function (:func:`share`'s ``enabled``)
_GUARDED_CALL = re.compile(r"^( +)if \((.*)\) (S\d+)\(C, v, flags, (K\d+\[\d+\]|NULL)\);$")

#: a literal that may not fit a row's ``int64_t``
_LONG_LITERAL = re.compile(r"\d{19}")

#: names a guard of a table must not use (the function's locals; the row's guard function
#: has ``C``, ``v`` and ``q`` only, and ``q`` is its own)
_LOCALS = re.compile(r"\b(?:t|x|q|flags)\b")


def share(
    lines: list[str],
    start: int,
    ind: int,
    done: str,
    mode: str,
    shapes: Shapes,
    enabled: str | None = None,
) -> None:
    """Replace the code of the command emitted from ``lines[start]`` on (its block at indent
    ``ind``, then its label ``done``) by a call of its shape function, adding the shape and
    the command's row of literals to ``shapes``. ``mode`` ``main``: the call site has no
    ``flags`` (0 is passed). Code with wide or suffixed constants stays in place.
    ``enabled``: a C condition, without side effects, that holds in every state where the
    command's code does more than jump past it (its guard or one of its error conditions,
    literals in place): the call is made only where it holds, so that a disabled command, the
    common case, costs its tests in place and no call nor table read."""
    body_lines = lines[start + 1 : -2]  # between "{" and "}" + the label
    cut = len("    " * (ind + 1))
    body = "\n".join(x[cut:] for x in body_lines).replace(f"goto {done};", "return;")
    if _UNSHARED.search(body) or done in body:
        return
    shape, row = _parametrized(body, _LITERAL)
    if any(int(x) > _INT64_MAX for x in row):
        return
    k, rows = shapes.setdefault(shape, (len(shapes), []))
    rows.append(row)
    flags = "flags" if mode != "main" else "0"
    table = f"K{k}[{len(rows) - 1}]" if row else "NULL"
    call = f"S{k}(C, v, {flags}, {table});"
    lines[start:] = ["    " * ind + (call if enabled is None else f"if ({enabled}) {call}")]


def _parametrized(code: str, literal: re.Pattern[str]) -> tuple[str, list[str]]:
    """``code`` with each match of ``literal`` whose group 1 did not match (an integer literal;
    group 1: text kept in place) replaced by ``q[j]``, and the literals in order: a shape and
    its row."""
    row: list[str] = []

    def param(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return m.group(0)
        row.append(m.group(0))
        return f"q[{len(row) - 1}]"

    return literal.sub(param, code), row


def _literal_table(name: str, rows: list[list[str]]) -> str:
    """The C definition of ``static const int64_t NAME[][n]``, one row of literals each (all
    of one length ``n`` >= 1): the tables of :func:`share`, :func:`share_processes` and
    :func:`tabulate`."""
    body = ",\n".join("{" + ", ".join(r) + "}" for r in rows)
    return f"static const int64_t {name}[][{len(rows[0])}] = {{\n{body}}};"


def shape_functions(shapes: Shapes, slots: int) -> list[str]:
    """The C lines of the shape functions ``S<k>(C, v, flags, q)`` and their tables ``K<k>``
    (``slots``: the unpacked state's ``int64_t`` slots, the size of the target state ``t``),
    to come before the process functions that call them."""
    if not shapes:
        return []
    out = ["static void m_sink(ctx_t *C, int flags, int ci, const int64_t *t);"]
    for shape, (k, rows) in shapes.items():
        if rows[0]:
            out.append(_literal_table(f"K{k}", rows))
        out.append(f"static void S{k}(ctx_t *C, const int64_t *v, int flags, const int64_t *q) {{")
        out.append(f"    int64_t t[{max(slots, 1)}]; int64_t x;")
        out.append("    (void)C; (void)v; (void)flags; (void)q; (void)t; (void)x;")
        out += ["    " + x for x in shape.split("\n")]
        out.append("}")
    return out


def weaken(e: Expr) -> Expr:
    """A condition that holds wherever boolean ``e`` does, in less code: each conjunction of
    more than two conjuncts keeps its first and last (through ``||`` and ``&&`` only, never
    under a negation), equal disjuncts once. For the in-place test of a shared command's error
    conditions (:func:`share`'s ``enabled``; the shape function tests them in full): the claims
    of SPIN's ``xr``/``xs`` channels and the channel-variable expansion of SPIN's leader example
    repeat ``own == c && running(p) && other(p) == c`` for each other process ``p``."""
    if isinstance(e, Op) and e.op == "||":
        return disj(dict.fromkeys(weaken(a) for a in e.args))
    parts = conjuncts(e)
    if len(parts) == 1:
        return e
    if len(parts) > 2:
        parts = (parts[0], parts[-1])
    return conj(weaken(a) for a in parts)


def factored(tests: list[Expr]) -> Expr:
    """The disjunction of ``tests``, each distinct disjunct once, consecutive disjuncts with
    the same first conjunct ``a`` (of two or more) as ``a && (rest || ...)``: the same
    condition, its common test once (the joint commands of a channel variable test
    ``ch == c`` in each of their guards' and error conditions' disjuncts)."""
    flat = list(dict.fromkeys(d for t in tests for d in _disjuncts(t)))
    out: list[Expr] = []
    k = 0
    while k < len(flat):
        head = conjuncts(flat[k])
        j = k + 1
        if len(head) > 1:
            while j < len(flat) and len(c := conjuncts(flat[j])) > 1 and c[0] == head[0]:
                j += 1
        if j - k == 1:
            out.append(flat[k])
        else:
            rest = disj(conj(conjuncts(flat[i])[1:]) for i in range(k, j))
            out.append(conj((head[0], rest)))
        k = j
    return disj(out)


def render(e: Expr, cb: Callable[[Expr], str]) -> str:
    """C for boolean ``e``: its ``&&`` and ``||`` spelled out (a ``||`` of other parts only
    whole), each other part by ``cb`` (the translator, whose memo the parts of :func:`weaken`
    and :func:`factored`, the model's own expressions, hit: a new expression would be
    translated and compared anew)."""
    # a disjunction of atoms whole: the translator writes x == 3 || ... || x == 7 as a range
    if isinstance(e, Op) and (
        e.op == "&&" or (e.op == "||" and any(_connective(a) for a in e.args))
    ):
        return "(" + f" {e.op} ".join(render(a, cb) for a in e.args) + ")"
    c = cb(e)
    return c if _grouped(c) else f"({c})"


def _connective(e: Expr) -> bool:
    return isinstance(e, Op) and e.op in ("&&", "||")


def _grouped(c: str) -> bool:
    """Whether C expression ``c`` is one parenthesized group (its first ``(`` closes last)."""
    if not c.startswith("("):
        return False
    depth = 0
    for k, ch in enumerate(c):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return k == len(c) - 1
    return False


def _disjuncts(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Op) and e.op == "||":
        return tuple(d for a in e.args for d in _disjuncts(a))
    return (e,)


def cond_switch(conds: list[tuple[int, Expr]], cb: Callable[[Expr], str]) -> list[str]:
    """The lines of a ``switch (j)`` returning condition ``e`` (C by ``cb``) for each ``(j, e)``
    of ``conds``, each conjunct of ``e`` once and one ``return`` per distinct condition (its
    ``case`` labels together): SPIN's leader example repeats a few channel conditions for every
    location of every process."""
    groups: dict[str, list[int]] = {}
    for j, e in conds:
        groups.setdefault(cb(conj(dict.fromkeys(conjuncts(e)))), []).append(j)
    out = ["    switch (j) {"]
    for c, js in groups.items():
        out.append("    " + " ".join(f"case {j}:" for j in js) + f" return {c};")
    out.append("    }")
    return out


#: the first line of a process function (:meth:`absmc.native.cgen.CGen.functions`)
_FN_HEAD = re.compile(r"static void fn(\d+)\(ctx_t \*C, const int64_t \*v, int flags\) \{$")

#: what stays in place in a process function's shape: ``case`` labels, ``big_t`` words and the
#: sizes of its local arrays (the ``int64_t t[N]`` line, kept whole)
_KEPT = re.compile(r"(UINT64_C\([^)]*\)|case -?\d+:|\w+ \w+\[\d+\];)|(?<![\w.])\d+(?![\w.])")


def share_processes(lines: list[str]) -> list[str]:
    """``lines`` (the model's C) with the process functions ``fn<k>`` whose code differs only
    in integer literals sharing one function ``P<j>(C, v, flags, q)``, each literal ``q[i]``
    of a row of ``static const int64_t PK<j>[][n]`` (``fn<k>`` calls it with its row): the
    instances of one proctype (SPIN's leader example: five ``nnode`` processes, each function
    a copy of the others but for slots, channel numbers and table rows). Functions with a
    ``switch`` on literals other than ``case`` labels, wide or suffixed constants keep their
    own code."""
    spans: list[tuple[int, int, int]] = []  # (fn number, first line, last line)
    k = 0
    while k < len(lines):
        m = _FN_HEAD.match(lines[k])
        if m is None:
            k += 1
            continue
        end = lines.index("}", k)
        spans.append((int(m.group(1)), k, end))
        k = end + 1
    groups: dict[str, list[tuple[int, list[str]]]] = {}
    for fn, a, b in spans:
        body = "\n".join(lines[a + 1 : b])
        if _UNSHARED.search(body):
            continue
        shape, row = _parametrized(body, _KEPT)
        if any(int(x) > _INT64_MAX for x in row):
            continue
        groups.setdefault(shape, []).append((fn, row))
    calls: dict[int, str] = {}
    head: list[str] = []
    for j, (shape, members) in enumerate(x for x in groups.items() if len(x[1]) > 1):
        head.append(_literal_table(f"PK{j}", [r or ["0"] for _, r in members]))
        head.append(f"static void P{j}(ctx_t *C, const int64_t *v, int flags, const int64_t *q) {{")
        head.append(shape)
        head.append("}")
        for r, (fn, _) in enumerate(members):
            calls[fn] = f"P{j}(C, v, flags, PK{j}[{r}]);"
    out: list[str] = []
    last = 0
    for fn, a, b in spans:
        if fn in calls:
            out += lines[last:a]
            out += [lines[a], "    " + calls[fn], "}"]
            last = b + 1
    out += lines[last:]
    if not head:
        return lines
    first = spans[0][1]
    return out[:first] + head + out[first:]


def tabulate(lines: list[str]) -> tuple[list[str], list[str]]:
    """``lines`` (the model's process functions, after :func:`share_processes`) with each run
    of at least :data:`TABULATE_MIN_RUN` consecutive guarded calls ``if (g) S<k>(C, v, flags,
    K<k>[r]);`` (comments between them aside) at one indentation also written as a loop over a
    table of rows (``grow_t``, ``runtime_head.c``), under ``#ifdef`` :data:`ROWS_MACRO`, in the
    same order; and the definitions the rows use, to come before the process functions: per
    shape of guard (its integer literals read from ``q``, as :func:`share` does), a function
    ``G<j>(C, v, q)`` and its table of literals ``GP<j>``.

    At ``-O0`` gcc spends most of its time on the code of such guards: SPIN's mobile2 example
    has 2,557 guarded calls of rendezvous pairs in 22 shapes of guard, and ``gcc -O0`` took
    1.3-1.5 s of CPU on its 0.86 MB source against 0.4 s with the tables. The loop tests the
    guards through a function pointer each (slower than in place, where ``-O1`` and up keep
    the calls), and calls the same shape functions with the same rows in the same order."""
    guards: dict[str, tuple[int, list[list[str]]]] = {}
    out: list[str] = []
    #: the run: (line, guard, shape function, its row); a comment line has no guard
    run: list[tuple[str, str | None, str, str]] = []
    indent = ""

    def flush() -> None:
        tail: list[str] = []  # comments after the last call belong to the next line
        while run and run[-1][1] is None:
            tail.insert(0, run.pop()[0])
        calls = [x for x in run if x[1] is not None]
        if len(calls) < TABULATE_MIN_RUN:
            out.extend(x[0] for x in run)
            out.extend(tail)
            run.clear()
            return
        rows: list[str] = []
        for _, cond, fn, krow in calls:
            assert cond is not None
            shape, params = _parametrized(cond, _LITERAL)
            j, table = guards.setdefault(shape, (len(guards), []))
            table.append(params)
            at = f"GP{j}[{len(table) - 1}]" if params else "NULL"
            rows.append(f"{indent}    {{G{j}, {fn}, {krow}, {at}}},")
        out.append(f"#ifdef {ROWS_MACRO}")
        out.append(f"{indent}{{ static const grow_t R[] = {{")
        out.extend(rows)
        out.append(f"{indent}}};")
        out.append(f"{indent}rows_run(C, v, flags, R, {len(calls)}); }}")
        out.append("#else")
        out.extend(x[0] for x in run)
        out.append("#endif")
        out.extend(tail)
        run.clear()

    for line in lines:
        m = _GUARDED_CALL.match(line)
        if m is not None and _tabulable(m.group(2)):
            if run and m.group(1) != indent:
                flush()
            indent = m.group(1)
            run.append((line, m.group(2), m.group(3), m.group(4)))
        elif run and line.lstrip().startswith("/*") and line.endswith("*/"):
            run.append((line, None, "", ""))  # a command's comment inside a run
        else:
            flush()
            out.append(line)
    flush()
    defs: list[str] = []
    for shape, (j, table) in guards.items():
        if table[0]:
            defs.append(_literal_table(f"GP{j}", table))
        sig = f"static int G{j}(ctx_t *C, const int64_t *v, const int64_t *q)"
        defs.append(f"{sig} ROWS_OPT;")
        defs.append(f"{sig} {{ (void)C; (void)v; (void)q; return {shape}; }}")
    if defs:
        defs = [f"#ifdef {ROWS_MACRO}", *defs, "#endif"]
    return out, defs


def _tabulable(cond: str) -> bool:
    """Whether guard ``cond`` can be a row's: no local of the process function, no wide or
    suffixed constant, no literal of 19 digits or more (past ``int64_t`` or near it)."""
    return not (_LOCALS.search(cond) or _UNSHARED.search(cond) or _LONG_LITERAL.search(cond))
