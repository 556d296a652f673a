"""Human-readable rendering of results and traces (rich tables; plain text when piped).

rich is imported only where it is used (a terminal, a table, a line plain text cannot carry):
piped, a verdict is written without it (:class:`PlainConsole`), saving a run ~0.07 s of start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from absmc.kernel.run.result import PropertyResult, Result, StateValue, Stats, Trace, Verdict

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

_STYLE = {Verdict.HOLDS: "bold green", Verdict.VIOLATED: "bold red", Verdict.UNKNOWN: "bold yellow"}
_MARK = {Verdict.HOLDS: "✓", Verdict.VIOLATED: "✗", Verdict.UNKNOWN: "?"}


#: integers longer than this many bits are shown by their size (tables stay readable; JSON
#: has every digit)
_SHOWN_BITS = 200


def _fmt_value(v: StateValue) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) and v.bit_length() > _SHOWN_BITS:
        return f"{'-' if v < 0 else ''}<{v.bit_length()}-bit integer>"
    return str(v)


def format_assignments(values: Mapping[str, StateValue]) -> str:
    """``a=1 b=true ...`` in the given order."""
    return " ".join(f"{n}={_fmt_value(v)}" for n, v in values.items())


def trace_table(trace: Trace, title: str | None = None) -> Table:
    """The step table of a trace: step, process, command, source line, changed variables
    (cells are plain text: brackets such as ``a[i]`` or ``[choose]`` are not rich markup)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("step", justify="right")
    table.add_column("process")
    table.add_column("command")
    table.add_column("source")
    table.add_column("changed")
    for k, step in enumerate(trace.steps):
        mark = " ⟲" if trace.cycle_start == k else ""
        if k == 0:
            table.add_row("0" + mark, "", "initial state", "", Text(format_assignments(step.state)))
        else:
            table.add_row(
                str(step.step) + mark,
                Text(step.process or ""),
                Text(step.command or ""),
                step.source or "",
                Text(format_assignments(trace.changed(k))),
            )
    return table


def format_stats(stats: Stats) -> str:
    """One statistics line (states, transitions, depth, time, states/s, memory, extras)."""
    parts = [
        f"states {stats.states:,}",
        f"transitions {stats.transitions:,}",
        f"depth {stats.max_depth:,}",
        f"time {stats.time_s:.3f} s",
        f"{stats.states_per_s:,.0f} states/s",
        f"peak memory {stats.peak_mb:.1f} MB",
    ]
    if "reachable_states" in stats.extra:  # a symbolic method: sets, not stored states
        parts = [f"time {stats.time_s:.3f} s", f"peak memory {stats.peak_mb:.1f} MB"]
    for key, value in stats.extra.items():
        if key == "reachable_states_of":
            continue  # said with reachable_states
        if key == "reachable_states":
            of = stats.extra.get("reachable_states_of")
            value = f"{value:,}" if isinstance(value, int) else value
            parts.append(f"reachable states {value}" + (f" ({of})" if of else ""))
            continue
        if (key == "store" and value == "exact") or key == "coverage":
            continue  # the bitstate coverage statement is in the verdict's reason
        if key == "reductions":  # the names of the reductions applied (none: nothing said)
            if value:
                parts.append(f"reductions {', '.join(value)}")
            continue
        if isinstance(value, dict):  # a method's group of figures (symbolic: fixpoint)
            inner = " ".join(f"{k.replace('_', ' ')}={v}" for k, v in value.items())
            parts.append(f"{key.replace('_', ' ')} [{inner}]")
        elif isinstance(value, float) and key.endswith("coverage"):
            parts.append(f"{key.replace('_', ' ')} {value:.4%}")
        elif isinstance(value, list):  # names: the reductions applied
            parts.append(f"{key.replace('_', ' ')} {' '.join(str(v) for v in value)}")
        elif isinstance(value, int | float) and key.endswith("_s"):  # seconds: say the unit
            parts.append(f"{key[:-2].replace('_', ' ')} {value:.3f} s")
        else:
            parts.append(f"{key.replace('_', ' ')} {value}")
    return ", ".join(parts)


class PlainConsole:
    """What :func:`render_result` prints to on a stream that is no terminal: the bytes of
    ``rich.console.Console(file=file, highlight=False, width=100_000, soft_wrap=True,
    color_system=None)`` (:func:`absmc.cli.common.console`'s console for pipes and files).
    A line of printable characters (``str.isprintable``) is written as it is; anything else (a
    table, a tab or control character, which rich expands or drops) goes through that rich
    console, made on first use."""

    def __init__(self, file: TextIO) -> None:
        self.file = file
        self._rich: Console | None = None

    def rich(self) -> Console:
        """The rich console for what plain lines cannot carry (made once)."""
        if self._rich is None:
            from rich.console import Console

            self._rich = Console(
                file=self.file, highlight=False, width=100_000, soft_wrap=True, color_system=None
            )
        return self._rich

    def print(self, renderable: object) -> None:
        """Print a rich renderable (a table) as the rich console does."""
        self.rich().print(renderable)


Segments = list[tuple[str, str | None]]


def _line(console: Console | PlainConsole, segments: Segments) -> None:
    """Print one line made of (text, rich style or ``None``) segments."""
    if isinstance(console, PlainConsole):
        plain = "".join(text for text, _ in segments)
        if plain.isprintable():  # rich writes such a line unchanged (styles need no codes)
            console.file.write(plain + "\n")
            console.file.flush()
            return
        console = console.rich()
    from rich.text import Text

    line = Text()
    for text, style in segments:
        line.append(text, style=style)
    console.print(line)


def _verdict_line(r: PropertyResult) -> Segments:
    seg: Segments = [
        (f"{_MARK[r.verdict]} ", _STYLE[r.verdict]),
        (f"{r.property}", "bold"),
        (f" ({r.kind}): ", None),
        (r.verdict.value, _STYLE[r.verdict]),
    ]
    if r.violations > 1:
        seg.append((f" ×{r.violations}", None))
    seg.append((f" — {r.reason}", None))
    return seg


def render_result(
    result: Result, console: Console | PlainConsole, show_iterations: bool = False
) -> None:
    """Print verdict lines, statistics, per-iteration tables and counterexample tables on
    ``console`` (a rich console, or a :class:`PlainConsole` for a pipe or file)."""
    _line(console, [(f"{result.model}: method {result.method}", "bold")])
    for r in result.results:
        _line(console, _verdict_line(r))
        cert = r.extra.get("certificate")
        if isinstance(cert, dict) and r.verdict is Verdict.HOLDS:
            _line(console, [(f"    inductive invariant (checked): {cert.get('invariant')}", None)])
        for line in method_lines(r):
            _line(console, [(line, "dim")])
    groups: dict[int, tuple[Stats, list[str]]] = {}  # one line per search, its properties
    for r in result.results:
        groups.setdefault(id(r.stats), (r.stats, []))[1].append(r.property)
    for stats, names in groups.values():
        which = f" ({', '.join(names)})" if len(groups) > 1 else ""
        _line(console, [(f"statistics{which}: " + format_stats(stats), "dim")])
    for note in result.notes:
        _line(console, [(f"note: {note}", "dim")])
    if show_iterations:
        tables: list[object] = []  # one table per distinct row list (methods may share one)
        for r in result.results:
            if r.iterations and r.iterations not in tables:
                tables.append(r.iterations)
                console.print(iterations_table(r.iterations, f"iterations ({r.property})"))
    for r in result.results:
        if r.trace is not None:
            kind = "counterexample" if r.verdict is Verdict.VIOLATED else "unconfirmed trace"
            n = len(r.trace.steps) - 1
            title = f"{kind} for '{r.property}' ({n} step{'s' if n != 1 else ''}"
            title += ", replayed on the concrete semantics)" if r.trace.replayed else ")"
            console.print(trace_table(r.trace, title))
            if r.trace.cycle_start is not None:
                _line(
                    console,
                    [
                        (
                            f"⟲ the cycle starts at step {r.trace.cycle_start}: the last step "
                            "returns to that state, and the steps after it repeat forever",
                            "dim",
                        )
                    ],
                )
            if r.trace.note:
                _line(console, [(r.trace.note, "red")])
    overall = result.verdict
    _line(console, [(f"verdict: {overall.value}", _STYLE[overall])])


def iterations_table(rows: Sequence[dict[str, object]], title: str) -> Table:
    """A per-iteration table (columns from the rows' keys, in order)."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    keys: list[str] = []
    for row in rows:
        for k in row:
            if k not in keys:
                keys.append(k)
    for k in keys:
        table.add_column(k.replace("_", " "))
    for row in rows:
        cells = []
        for k in keys:
            v = row.get(k, "")
            if isinstance(v, list):
                cells.append(", ".join(str(x) for x in v) or "-")
            elif isinstance(v, float):
                cells.append(f"{v:.3f}")
            else:
                cells.append(str(v))
        table.add_row(*cells)
    return table


def method_lines(r: PropertyResult) -> list[str]:
    """For a portfolio's result (``extra["methods"]``): one line per method, what it did for
    this property (decided, agrees, its own verdict and reason, sat out, stopped)."""
    methods = r.extra.get("methods")
    if not isinstance(methods, dict):
        return []
    out = []
    for name, o in methods.items():
        role = o.get("role") or o.get("verdict") or ""
        text = o.get("rejected") or o.get("reason") or ""
        if role in {"decided", "agrees"} and r.verdict is not Verdict.UNKNOWN:
            text = f"{o.get('verdict')}: {text}" if role == "agrees" else "see above"
        out.append(f"    {name}: {role + ' — ' if role else ''}{text}")
    return out
