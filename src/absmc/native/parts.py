"""One generated C source as several translation units, compiled in parallel at ``-O0``.

gcc compiles one translation unit on one CPU, and at ``-O0`` most of its time goes to code
generation of the model's process functions (``fn<k>``, :meth:`absmc.native.cgen.CGen.functions`):
SPIN's mobile1 example gives 1.07 MB of C, 620 KB of it process functions, and ``gcc -O0``
takes ~1.8 s, most of the model-to-verdict time of its LTL rows. :func:`split_source` cuts such
a source into parts of about equal size that the compiler runs on side by side
(:func:`absmc.native.build.load_library`), then links: part 0 is the whole source but for
the process functions moved out; each other part has the common head, the declarations of
the shape functions and their tables, and its process functions.

What is shared, and how:

* the text before :data:`MODEL_MARK` (the ``#define`` lines and ``runtime_head.c``: types,
  macros, ``static inline`` helpers) is in every part;
* the shape functions ``S<k>``/``P<k>`` (:mod:`absmc.native.shapes`), their constant
  tables ``K<k>``/``PK<k>``, the guard functions ``G<j>`` and tables ``GP<j>`` of
  :func:`~absmc.native.shapes.tabulate` and ``m_sink`` (where every step goes) stay in part 0
  with hidden external linkage, declared in every part;
* a process function moves to another part only when every name its body uses is one of
  those, a macro, a type or a function *defined* in the head, or one it declares itself (a
  label, a local variable): a body that uses anything else (a ``static`` function of part
  0, a global) stays in part 0, where it was.

The library is the same code as the one translation unit's (only linkage differs), and a
split build that fails is compiled again whole (:func:`absmc.native.build.load_library`).
Only ``-O0`` splits: at higher levels the compiler inlines shape functions into their callers
within one unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MODEL_MARK", "SPLIT_MIN_CHARS", "Split", "split_source"]

#: the line :meth:`absmc.native.cgen.CGen.source` puts between the head and the model's code
MODEL_MARK = "/* absmc: model code */"

#: a source whose process functions have fewer characters of code compiled at ``-O0`` (their
#: text but what ``#else`` leaves out under :data:`absmc.native.shapes.ROWS_MACRO`) compiles as
#: one unit. SPIN's mobile1 example: 620 KB of process functions before
#: :func:`absmc.native.shapes.tabulate` (gcc -O0: 1.4-1.6 s of CPU, 0.9 s wall as 2 parts
#: against 1.6 s whole), 181 KB after (its 1.37 MB whole: 0.50-0.54 s; as 2 parts 0.55-0.63 s,
#: with the 0.12 s of this module's scan)
SPLIT_MIN_CHARS = 250_000

#: gcc -O0's time per character of a process function against the rest of the source (SPIN's
#: mobile1: its 453 KB of tables, shape functions and runtime take 0.3 s of CPU, and 210-250 KB
#: of its process functions 0.45-0.6 s each): parts are balanced by this weighted size
FN_WEIGHT = 3

#: the hidden external linkage of the functions called across parts
LINK = '__attribute__((visibility("hidden")))'

_FN = re.compile(r"static void (fn\d+)\(ctx_t \*C, const int64_t \*v, int flags\) \{$")
_SHAPE = re.compile(
    r"static void ((?:S|P)\d+)\(ctx_t \*C, const int64_t \*v, int flags, const int64_t \*q\) \{$"
)
#: the model code's function every process function's steps go through (CGen.functions)
_SINK = "static void m_sink(ctx_t *C, int flags, int ci, const int64_t *t)"
_TABLE = re.compile(r"static const int64_t ((?:P?K|GP)\d+\[\]\[\d+\]) = \{$")
#: a guard function of a table of rows (one line: shapes.tabulate)
_GUARD = re.compile(r"static int (G\d+)\(ctx_t \*C, const int64_t \*v, const int64_t \*q\) \{.*\}$")
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
#: a preprocessor line (shapes.tabulate's ``#ifdef``: its macro is no name the body uses)
_DIRECTIVE = re.compile(r"^[ \t]*#.*$", re.M)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
#: a member after ``->`` or ``.`` (not a name of its own)
_MEMBER = re.compile(r"(?:->|\.)\s*[A-Za-z_]\w*")
_OWN = re.compile(r"^(?:(?:S|P|K|PK|G|GP)\d+|m_sink)$")

#: the names a moved process function's body may use beside those the head defines: C's
#: keywords and types, its own locals and parameters
_ALLOWED = frozenset(
    (
        *("if", "else", "switch", "case", "default", "break", "return", "for", "while", "do"),
        *("goto", "continue", "sizeof", "int", "long", "short", "char", "unsigned", "signed"),
        *("void", "const", "static", "inline", "struct", "union", "enum", "NULL", "__int128"),
        *("int64_t", "uint64_t", "int32_t", "uint32_t", "int8_t", "uint8_t", "int16_t"),
        *("uint16_t", "C", "v", "flags", "t", "x", "q", "INT64_C", "UINT64_C", "memcpy"),
        "memset",
    )
)

_LABEL = re.compile(r"\bgoto\s+([A-Za-z_]\w*)|^\s*([A-Za-z_]\w*):(?!:)", re.M)
_LOCAL = re.compile(
    r"\b(?:u?int(?:8|16|32|64)_t|__int128|int|big_t|grow_t)\s+\**\s*([A-Za-z_]\w*)\s*[=;\[,]"
)
_DEFINED_FN = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)
#: a function the head only declares (a prototype) and a variable it declares
_DECLARED = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*;", re.M)
_STATIC_VAR = re.compile(r"^static\s[\w\s\*]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*[=;]", re.M)
_MACRO = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)", re.M)
_TYPEDEF = re.compile(r"\btypedef\b[^;]*?\b([A-Za-z_]\w*)\s*;")
_TAG = re.compile(r"\b(?:struct|union|enum)\s+([A-Za-z_]\w*)")
_BRACED_TYPEDEF = re.compile(r"\}\s*([A-Za-z_]\w*)\s*;")


@dataclass(frozen=True, slots=True)
class Split:
    """The translation units of one source: ``parts[0]`` has everything but ``moved``, the
    process functions placed in the other parts."""

    parts: tuple[str, ...]
    moved: tuple[str, ...]


def _head_names(head: str) -> frozenset[str]:
    """The names ``head`` defines that another part may use as its own copy: macros, typedefs,
    tags, and the functions it defines whose bodies use none of its variables, nor a function
    it only declares (defined in part 0: a copy would see another object), nor such a
    function."""
    names: set[str] = set()
    for rx in (_MACRO, _TYPEDEF, _TAG, _BRACED_TYPEDEF):
        names.update(m.group(1) for m in rx.finditer(head))
    bodies: dict[str, set[str]] = {}
    lines = head.split("\n")
    k = 0
    while k < len(lines):
        m = _DEFINED_FN.match(lines[k])
        if m is None:
            k += 1
            continue
        end = k
        if not lines[k].rstrip().endswith("}"):  # else the whole function is on one line
            while end + 1 < len(lines) and lines[end] != "}":
                end += 1
        first = lines[k][m.end() :]
        bodies[m.group(1)] = _uses("\n".join([first, *lines[k + 1 : end + 1]]))
        k = end + 1
    own = set(bodies)
    foreign = {m.group(1) for m in _DECLARED.finditer(head)} - own - _ALLOWED
    foreign |= {m.group(1) for m in _STATIC_VAR.finditer(head)} - _ALLOWED
    grew = True
    while grew:  # the functions that use a foreign name, directly or through another one
        grew = False
        for name in list(own):
            if bodies[name] & foreign:
                own.discard(name)
                foreign.add(name)
                grew = True
    return frozenset(names | own)


def _uses(body: str) -> set[str]:
    """The names ``body`` uses but does not declare itself (its labels and local variables)."""
    code = _MEMBER.sub(" ", _STRING.sub('""', _COMMENT.sub(" ", _DIRECTIVE.sub("", body))))
    own = {a or b for a, b in _LABEL.findall(code)} | set(_LOCAL.findall(code))
    return set(_IDENT.findall(code)) - own


def _sizes(lines: list[str], a: int, b: int) -> tuple[int, int]:
    """The characters of ``lines[a .. b]`` compiled at ``-O0`` and those an ``#else`` leaves
    out there (the in-place form of :func:`absmc.native.shapes.tabulate`'s tables)."""
    live = dead = 0
    skipped = False
    for j in range(a, b + 1):
        line = lines[j]
        if line == "#else":
            skipped = True
        elif line == "#endif":
            skipped = False
        elif skipped:
            dead += len(line) + 1
            continue
        live += len(line) + 1
    return live, dead


def _end(lines: list[str], k: int, closing: str) -> int:
    """The index of the first line from ``k`` on that is ``closing`` (a function's ``}`` at
    column 0) or ends with it (a table's ``};``)."""
    for j in range(k, len(lines)):
        if lines[j] == closing or (closing == "};" and lines[j].endswith("};")):
            return j
    raise ValueError("unterminated definition in the generated C")


def split_source(source: str, parts: int, min_chars: int = SPLIT_MIN_CHARS) -> Split | None:
    """``source`` (from :meth:`absmc.native.cgen.CGen.source`, with :data:`MODEL_MARK`) as at
    most ``parts`` translation units of about equal compile time (:data:`FN_WEIGHT`), the
    largest movable process functions placed first; ``None`` when it has no mark, its process
    functions have less than ``min_chars`` characters of code compiled at ``-O0``
    (:data:`SPLIT_MIN_CHARS`), ``parts`` < 2, or no process function can move."""
    if parts < 2 or len(source) < min_chars:
        return None
    at = source.find("\n" + MODEL_MARK + "\n")
    if at < 0:
        return None
    head = source[: at + 1]
    lines = source[at + len(MODEL_MARK) + 2 :].split("\n")
    tables: list[str] = []
    shapes: list[str] = []  # the shape functions' names
    guards: list[str] = []  # the guard functions' names
    fns: dict[str, tuple[int, int]] = {}  # process function -> its lines [a, b]
    size: dict[str, int] = {}  # process function -> its weighted size
    chars: dict[str, int] = {}  # process function -> its characters
    compiled = 0  # the process functions' characters compiled at -O0
    k = 0
    while k < len(lines):
        line = lines[k]
        t = _TABLE.match(line)
        if t:
            tables.append(f"extern {LINK} const int64_t {t.group(1)};")
            k = _end(lines, k, "};") + 1
            continue
        g = _GUARD.match(line)
        if g:
            guards.append(g.group(1))
            k += 1
            continue
        m = _SHAPE.match(line) or _FN.match(line)
        if m is None:
            k += 1
            continue
        end = _end(lines, k, "}")
        name = m.group(1)
        if name.startswith("fn"):
            live, dead = _sizes(lines, k, end)
            compiled += live
            fns[name] = (k, end)
            size[name], chars[name] = FN_WEIGHT * live + dead, live + dead
        else:
            shapes.append(name)
        k = end + 1
    if compiled < min_chars:
        return None
    allowed = _ALLOWED | _head_names(head)
    for name, (a, b) in list(fns.items()):  # only those that use what every part has move
        if not all(n in allowed or _OWN.match(n) for n in _uses("\n".join(lines[a + 1 : b]))):
            del fns[name], size[name]
    if not fns:
        return None
    # the largest process functions first, each to the part that is smallest so far (part 0
    # holds everything that does not move)
    fixed = len(source) - sum(chars[n] for n in fns)
    loads = [fixed] + [0] * (parts - 1)
    place: dict[str, int] = {}
    for name in sorted(size, key=lambda n: -size[n]):
        j = min(range(parts), key=lambda i: loads[i])
        loads[j] += size[name]
        if j:  # else it stays where it is
            place[name] = j
    if not place:
        return None
    sig = "(ctx_t *C, const int64_t *v, int flags"
    protos = [_SINK.replace("static", LINK, 1) + ";"]
    protos += [f"{LINK} void {n}{sig}, const int64_t *q);" for n in shapes]
    protos += [f"{LINK} int {n}(ctx_t *C, const int64_t *v, const int64_t *q);" for n in guards]
    protos += [f"{LINK} void {n}{sig});" for n in sorted(place)]
    # part 0: the source in order, the moved functions taken out, the shape functions and the
    # moved ones with external linkage
    out0: list[str] = [head.rstrip("\n"), *protos]
    skip: set[int] = set()
    for n in place:
        a, b = fns[n]
        skip.update(range(a, b + 1))
    relink = re.compile(
        r"^static (void (?:S|P)\d+\(ctx_t \*C|int G\d+\(ctx_t \*C|const int64_t (?:P?K|GP)\d+\[\])"
    )
    for j, line in enumerate(lines):
        if j in skip:
            continue
        if line.startswith(_SINK):
            line = LINK + line[len("static") :]
        out0.append(relink.sub(LINK + r" \1", line) if line.startswith("static ") else line)
    units = ["\n".join(out0)]
    for p in range(1, parts):
        mine = [n for n in sorted(place) if place[n] == p]
        if not mine:
            continue
        text = [head.rstrip("\n"), *tables, *protos]
        for n in mine:
            a, b = fns[n]
            text.append(_FN.sub(lambda m: f"{LINK} void {m.group(1)}{sig}) {{", lines[a]))
            text.extend(lines[a + 1 : b + 1])
        units.append("\n".join(text) + "\n")
    return Split(tuple(units), tuple(sorted(place)))
