"""The C preprocessor step of the Promela front end.

SPIN runs the C preprocessor over every model before parsing it (``gcc -E -x c`` on Linux), so
``#define`` (with and without arguments), ``#if``/``#ifdef``/``#include`` and ``-D NAME=VALUE``
work as they do in C. :func:`preprocess` does the same with the system preprocessor (``cpp``,
else ``gcc -E``) and falls back to ``pcpp``, a pure-Python C99 preprocessor, when neither is
installed. The output keeps the preprocessor's line markers (``# LINE "FILE"``); :class:`LineMap`
turns them into a map from output lines to original ``(file, line)`` so that errors point into
the user's files.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from absmc.ir.span import ModelError, SourceSpan

_MARKER = re.compile(r'^#(?:line)?\s*(\d+)\s*(?:"((?:[^"\\]|\\.)*)")?.*$')
_CPP_ERROR = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?:fatal )?error:\s*(?P<msg>.*)$"
)


@dataclass
class LineMap:
    """Output line (1-based) -> ``(file, line)`` of the original source."""

    origin: list[tuple[str, int]] = field(default_factory=list)

    def locate(self, line: int) -> tuple[str, int]:
        """The original position of output line ``line`` (clamped to the known range)."""
        if not self.origin:
            return ("<model>", line)
        i = min(max(line, 1), len(self.origin)) - 1
        return self.origin[i]

    def span(self, line: int, column: int) -> SourceSpan:
        """A source span in the original file for an output position."""
        f, ln = self.locate(line)
        return SourceSpan(f, ln, column)


def strip_markers(text: str, main_file: str) -> tuple[str, LineMap]:
    """Replace line markers by empty lines and record where each output line came from."""
    lines = text.split("\n")
    out: list[str] = []
    origin: list[tuple[str, int]] = []
    cur_file, cur_line = main_file, 1
    for raw in lines:
        if raw.startswith("#"):
            m = _MARKER.match(raw)
            if m:
                cur_line = int(m.group(1))
                if m.group(2) is not None:
                    name = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
                    cur_file = main_file if name in ("", "<stdin>") else name
                out.append("")
                origin.append((cur_file, cur_line))
                continue
            if raw.startswith("#pragma") or raw.startswith("#ident"):
                out.append("")
                origin.append((cur_file, cur_line))
                cur_line += 1
                continue
        out.append(raw)
        origin.append((cur_file, cur_line))
        cur_line += 1
    return "\n".join(out), LineMap(origin)


def _system_cpp() -> list[str] | None:
    if shutil.which("cpp"):
        return ["cpp", "-std=gnu99", "-x", "c"]
    if shutil.which("gcc"):
        return ["gcc", "-std=gnu99", "-E", "-x", "c"]
    return None


def _define_args(defines: Mapping[str, str]) -> list[str]:
    return [f"-D{k}={v}" if v != "" else f"-D{k}" for k, v in defines.items()]


def _run_cpp(cmd: list[str], path: Path, text: str, defines: Mapping[str, str]) -> str:
    proc = subprocess.run(
        [*cmd, *_define_args(defines), "-I", str(path.parent), "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=str(path.parent) if str(path.parent) else None,
    )
    if proc.returncode != 0:
        for line in proc.stderr.splitlines():
            m = _CPP_ERROR.match(line)
            if m:
                f = m.group("file")
                f = str(path) if f in ("<stdin>", "-") else f
                col = int(m.group("col") or 1)
                raise ModelError(
                    f"preprocessor: {m.group('msg')}", SourceSpan(f, int(m.group("line")), col)
                )
        first = proc.stderr.strip().splitlines()[:1]
        raise ModelError(
            f"preprocessor failed: {first[0] if first else 'unknown error'}", None, str(path)
        )
    # cpp names stdin "<stdin>": strip_markers maps it back to the model file
    return proc.stdout


def _run_pcpp(path: Path, text: str, defines: Mapping[str, str]) -> str:
    from pcpp import Preprocessor

    errors: list[ModelError] = []

    class _Pre(Preprocessor):  # type: ignore[misc]
        def on_error(self, file: str, line: int, msg: str) -> None:
            errors.append(
                ModelError(f"preprocessor: {msg}", SourceSpan(file or str(path), line, 1))
            )

        def on_include_not_found(
            self, is_malformed: bool, is_system_include: bool, curdir: str, includepath: str
        ) -> None:
            errors.append(
                ModelError(f"preprocessor: cannot include '{includepath}'", None, str(path))
            )
            raise StopIteration

    pre = _Pre()
    pre.line_directive = "#"
    pre.add_path(str(path.parent))
    for k, v in defines.items():
        pre.define(f"{k} {v}" if v != "" else f"{k} 1")
    pre.parse(text, str(path))
    buf = io.StringIO()
    pre.write(buf)
    if errors:
        raise errors[0]
    return buf.getvalue()


def preprocess(
    text: str, path: str | Path, defines: Mapping[str, str] | None = None, use_system: bool = True
) -> tuple[str, LineMap]:
    """Preprocess Promela source ``text`` read from ``path``.

    Returns the preprocessed text with line markers replaced by empty lines, and the map back to
    original positions. ``defines`` are ``-D NAME=VALUE`` definitions. Raises ``ModelError`` (at
    the offending line when the preprocessor says where) when preprocessing fails. Models
    without any ``#`` directive and without definitions skip the preprocessor entirely.
    """
    p = Path(path)
    defs = dict(defines or {})
    if not defs and not re.search(r"^\s*#", text, re.M):
        return text, LineMap([(str(p), i + 1) for i in range(text.count("\n") + 1)])
    cmd = _system_cpp() if use_system else None
    out = _run_cpp(cmd, p, text, defs) if cmd is not None else _run_pcpp(p, text, defs)
    return strip_markers(out, str(p))
