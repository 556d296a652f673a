"""Token-level preparation of preprocessed Promela text before the LALR parser sees it.

Two things SPIN's own lexer does are done here, keeping every character at its line and column:

* ``ltl NAME { formula }`` blocks are cut out (replaced by spaces) and returned as text: they are
  kept for the LTL issue, not parsed as statements;
* SPIN's *implied semicolons* (``spinlex.c``, SPIN >= 6.3): inside a proctype, init, never,
  trace or inline body, at parenthesis depth 0, a newline after ``} ) ] od fi else break``, a
  name, a constant, ``++`` or ``--`` ends the statement (unless the next word is ``unless``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""(?P<ws>[ \t\r\f]+)|(?P<nl>\n)|(?P<comment>//[^\n]*|/\*(?:.|\n)*?\*/)
    |(?P<str>"(?:\\.|[^"\\\n])*")|(?P<chr>'(?:\\.|[^'\\])')|(?P<num>[0-9][0-9a-zA-Z]*)
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\+\+|--|::|->|\S)""",
    re.X,
)

_ENDERS_KW = {"od", "fi", "else", "break", "true", "false", "skip"}
_KEYWORDS = {
    "active", "assert", "atomic", "bit", "bool", "break", "byte", "chan", "d_step", "D_proctype",
    "do", "else", "empty", "enabled", "eval", "false", "fi", "for", "full", "goto", "hidden",
    "if", "in", "init", "inline", "int", "len", "local", "ltl", "mtype", "nempty", "never", "nfull",
    "notrace", "np_", "od", "of", "pc_value", "pid", "printf", "printm", "priority", "proctype",
    "provided", "run", "select", "short", "show", "skip", "timeout", "trace", "true", "typedef",
    "unless", "unsigned", "xr", "xs",
}  # fmt: skip
_BODY_OPENERS = {")", "init", "never", "trace", "notrace"}
_AFTER_BRACE = {
    "proctype", "D_proctype", "init", "never", "::", "fi", "od", "}", "unless", ";", "->",
}  # fmt: skip


@dataclass
class LtlBlock:
    """An ``ltl`` block cut out of the source: its name (or ``None``), formula text, position."""

    name: str | None
    formula: str
    line: int
    column: int


def prepare(text: str) -> tuple[str, list[LtlBlock]]:
    """Return ``text`` with ltl blocks blanked out and implied semicolons inserted, plus the
    ltl blocks found. Line and column of every remaining token are unchanged."""
    chars = list(text)
    ltls: list[LtlBlock] = []
    inserts: list[int] = []  # positions (of a newline) before which ';' is inserted
    replaced: list[int] = []
    depth = 0  # brace depth
    seq_depth = -1  # brace depth of the body we are in (statements), -1 when outside
    par = 0
    last_kind = ""  # 'end' when the last token can end a statement
    last_tok = ""
    last_end = 0
    prev_sig: list[str] = []  # last significant tokens (for body detection)
    line, line_start = 1, 0
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:  # pragma: no cover - the pattern matches any character
            break
        kind = m.lastgroup
        tok = m.group()
        start = pos
        pos = m.end()
        if kind == "nl":
            if seq_depth >= 0 and par == 0 and last_kind == "end":
                nxt = re.compile(r"[\s]*(\w+)").match(text, pos)
                if not (last_tok == "}" and nxt is not None and nxt.group(1) == "unless"):
                    inserts.append(last_end)  # right after the token (not inside a comment)
                    last_kind = ""
            line += 1
            line_start = pos
            continue
        if kind in ("ws",):
            continue
        if kind == "comment":
            line += tok.count("\n")
            if "\n" in tok:
                line_start = start + tok.rindex("\n") + 1
            continue
        if kind == "name" and tok == "ltl" and depth == 0:
            # ltl [name] { ... }: cut out up to the matching brace
            j = pos
            mm = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)?\s*\{").match(text, j)
            if mm is not None:
                k = mm.end()
                level = 1
                while k < n and level:
                    if text[k] == "{":
                        level += 1
                    elif text[k] == "}":
                        level -= 1
                    k += 1
                body = text[mm.end() : k - 1]
                ltls.append(LtlBlock(mm.group(1), body.strip(), line, start - line_start + 1))
                for q in range(start, k):
                    if chars[q] != "\n":
                        chars[q] = " "
                line += text.count("\n", start, k)
                if "\n" in text[start:k]:
                    line_start = text.rindex("\n", start, k) + 1
                pos = k
                continue
        # significant token
        if tok == "{":
            if (
                seq_depth < 0
                and prev_sig
                and (
                    prev_sig[-1] in _BODY_OPENERS
                    or (len(prev_sig) >= 2 and prev_sig[-2] == "priority")
                    or (len(prev_sig) >= 2 and prev_sig[-2] == "never")
                )
            ):
                seq_depth = depth
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == seq_depth:
                seq_depth = -1
        elif tok == "(":
            par += 1
        elif tok == ")":
            par = max(0, par - 1)
        if (
            kind == "name"
            and tok == "pred"
            and (not prev_sig or prev_sig[-1] in (";", "{", "}", "::", "->"))
        ):
            # Bonsai's `pred EXPR;` (paper 004, Sec. 3.1) unless `pred` is used as a name
            mm = re.compile(r"[ \t]+([A-Za-z_0-9(~]|!(?!=)|-(?![->]))").match(text, pos)
            if mm is not None:
                chars[start] = "\x01"
        if kind in ("num", "chr") or tok in ("}", ")", "]", "++", "--"):
            last_kind = "end"
        elif kind == "name":
            last_kind = "end" if (tok not in _KEYWORDS or tok in _ENDERS_KW) else ""
        else:
            last_kind = ""
        last_tok = tok
        last_end = pos
        prev_sig.append(tok)
        if len(prev_sig) > 4:
            prev_sig.pop(0)
    # SPIN's yylex repairs: a ';' after '}' and after 'else' unless the next token is one that
    # may follow directly (spinlex.c, yylex)
    toks = [
        (m.start(), m.group())
        for m in _SIG.finditer("".join(chars))
        if not m.group().startswith(("//", "/*"))
    ]
    text2 = "".join(chars)
    for i, (at, tok) in enumerate(toks):
        follow = toks[i + 1][1] if i + 1 < len(toks) else None
        if tok == "}" and follow is not None and follow not in _AFTER_BRACE:
            replaced.append(at + 1)
        elif tok == "else" and follow is not None and follow not in (";", "->", "fi"):
            replaced.append(at + 4)
    for at in inserts:
        replaced.append(at)
    out = list(text2)
    for at in _remote_colons(toks):
        out[at] = REMOTE_COLON
    for at in sorted(set(replaced), reverse=True):
        if at < len(out) and out[at] in " \t":
            out[at] = ";"
        else:
            out.insert(at, ";")
    return "".join(out), ltls


#: what the ``:`` of a remote variable reference becomes (the grammar's ``REMOTE`` terminal)
REMOTE_COLON = "\x02"


def _remote_colons(toks: list[tuple[int, str]]) -> list[int]:
    """The positions of the ``:`` of each remote variable reference ``P[e]:v`` / ``P:v``, where
    ``P`` names a proctype (SPIN's lexer reads a proctype's name as ``PNAME``, so there ``:``
    cannot start a label or end a conditional expression's middle part: ``spinlex.c``,
    ``spin.y`` ``varref``)."""
    names = {
        toks[i + 1][1] for i, (_, tok) in enumerate(toks[:-1]) if tok in ("proctype", "D_proctype")
    }
    out: list[int] = []
    for i, (_, tok) in enumerate(toks):
        if tok not in names or (i > 0 and toks[i - 1][1] in ("proctype", "D_proctype", "run")):
            continue
        j = i + 1
        if j < len(toks) and toks[j][1] == "[":
            level = 0
            while j < len(toks):
                level += {"[": 1, "]": -1}.get(toks[j][1], 0)
                j += 1
                if level == 0:
                    break
        if (
            j + 1 < len(toks)
            and toks[j][1] == ":"
            and re.fullmatch(r"[A-Za-z_]\w*", toks[j + 1][1]) is not None
        ):
            out.append(toks[j][0])
    return out


_SIG = re.compile(
    r"//[^\n]*|/\*(?:.|\n)*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\])'"
    r"|[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9a-zA-Z]*|::|->|\S"
)
