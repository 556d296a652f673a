"""Compile generated C with the system C compiler and load it through cffi (ABI mode).

The shared library of a source is cached under :func:`cache_dir` by the SHA-256 of the source
and the compiler command, so a model is compiled once per machine. Compilation writes to a
temporary file and renames it into place (concurrent runs never load a half-written library).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from absmc.native.parts import Split, split_source
from absmc.native.shapes import ROWS_MACRO

#: the C declarations of the entry points (runtime_tail.c; the ``l_`` and ``cn_`` ones:
#: runtime_ltl.c and runtime_cndfs.c, in a
#: library built by :class:`absmc.native.ltl.NativeLtl` only; the ``g_`` ones: runtime_graph.c, in
#: one built by :class:`absmc.native.graph.NativeGraph` only)
CDEF = """
typedef struct ctx_s ctx_t;
typedef struct search_s search_t;
ctx_t *ctx_new(void);
void ctx_free(ctx_t *C);
int api_successors(ctx_t *C, const int64_t *s);
int api_step(ctx_t *C, int ci, const int64_t *s, int64_t *out, int *found);
int api_violated(ctx_t *C, const int64_t *s, int32_t *out);
int api_valid_end(ctx_t *C, const int64_t *s);
int api_in_range(const int64_t *s);
int api_nv(void);
int api_nw(void);
int64_t api_cuts(ctx_t *C);
int32_t *api_ch(ctx_t *C);
int64_t *api_sst(ctx_t *C);
int32_t *api_soff(ctx_t *C);
int32_t *api_slen(ctx_t *C);
int api_nsteps(ctx_t *C);
int api_nfails(ctx_t *C);
int32_t *api_foff(ctx_t *C);
int32_t *api_flen(ctx_t *C);
int32_t *api_fkind(ctx_t *C);
int64_t *api_fa(ctx_t *C);
int64_t *api_fb(ctx_t *C);
search_t *s_new(int hc, int keep_going, int check_deadlock, int state_checks,
                int64_t max_states, int64_t max_depth);
void s_free(search_t *S);
int s_init(search_t *S, const int64_t *init);
int s_run(search_t *S, double seconds);
int64_t s_stat(search_t *S, int which);
void s_set_max_bytes(search_t *S, int64_t max_bytes);
void s_set_threads(search_t *S, int threads, int64_t after);
int s_set_reduce(search_t *S, int on);
double s_thread_cpu(search_t *S, int i);
int s_set_bitstate(search_t *S, int log2_bits, int k);
void s_bitstate_counts(search_t *S, int64_t *out);
int s_set_tree(search_t *S, const int32_t *leaves, int n);
int64_t s_tree_nodes(search_t *S, int i);
void s_violation(search_t *S, int slot, int64_t *out);
int64_t s_path(search_t *S, int64_t node, uint32_t *buf, int64_t cap);
int64_t s_chain(search_t *S, int64_t k, int32_t *buf, int64_t cap);
typedef struct ltl_s ltl_t;
ltl_t *l_new(int claim, int stutter, int safety, int deadlock, int state_checks, int early,
             int64_t max_states, int64_t max_depth);
void l_free(ltl_t *L);
int l_run(ltl_t *L, const int64_t *init, double seconds);
int64_t l_stat(ltl_t *L, int which);
int l_lasso_state(ltl_t *L, int64_t k, int64_t *out);
int l_lasso_counter(ltl_t *L, int64_t k);
void l_set_fair(ltl_t *L, int on);
int l_set_reduce(ltl_t *L, int on);
int l_set_store(ltl_t *L, int kind, int log2_bits, int k);
void l_bitstate_counts(ltl_t *L, int64_t *out);
typedef struct cn_s cn_t;
cn_t *cn_new(int claim, int stutter, int safety, int deadlock, int state_checks, int fair,
             int64_t max_states, int threads);
void cn_free(cn_t *N);
void cn_stop(cn_t *N);
int cn_run(cn_t *N, const int64_t *init, double seconds);
int64_t cn_stat(cn_t *N, int which);
int cn_lasso_state(cn_t *N, int64_t k, int64_t *out);
int cn_lasso_counter(cn_t *N, int64_t k);
int cn_set_reduce(cn_t *N, int on);
typedef struct graph_s graph_t;
graph_t *g_new(int natoms, int64_t max_states);
void g_free(graph_t *G);
int g_init(graph_t *G, const int64_t *init);
int g_run(graph_t *G, double seconds);
int g_finish(graph_t *G);
int64_t g_stat(graph_t *G, int which);
int64_t *g_off(graph_t *G);
int32_t *g_dst(graph_t *G);
int32_t *g_cmd(graph_t *G);
int64_t *g_poff(graph_t *G);
int32_t *g_psrc(graph_t *G);
void g_atom_column(graph_t *G, int k, uint8_t *out);
void g_state(graph_t *G, int64_t i, int64_t *out);
int64_t g_find(graph_t *G, const int64_t *v);
"""

#: environment variable overriding the cache directory
CACHE_ENV = "ABSMC_CACHE_DIR"

#: environment variable naming the C compiler (default: cc, then gcc, then clang)
CC_ENV = "CC"

#: environment variable overriding the optimization level of the search (default ``-O2``)
OPT_ENV = "ABSMC_NATIVE_OPT"

_FLAGS = ("-shared", "-fPIC", "-pthread", "-w")

#: flags of a level beside it. At ``-O1`` (the level of large generated sources,
#: :data:`LARGE_SOURCE`) passes left out: the dominator optimizations and jump threading spend
#: most of their time on the long chains of conditions of generated guards (gcc 12 on SPIN's
#: leader example, ``-N p0``: ~17% of gcc's CPU, 1.43 -> 1.18 s) for no measurable gain in
#: search speed (its 1,975,050-state safety search, 4.35-4.56 s of CPU against 4.47-4.54 s
#: with them). At ``-O0`` the shared commands' guards are tested from tables
#: (:func:`absmc.native.shapes.tabulate`), a fraction of the code to compile
LEVEL_FLAGS = {
    "-O0": (f"-D{ROWS_MACRO}",),
    "-O1": ("-fno-tree-dominator-opts", "-fno-thread-jumps"),
}


def compiler_flags(opt: str) -> tuple[str, ...]:
    """The compiler's flags for optimization level ``opt``, before ``-o``: the level,
    :data:`LEVEL_FLAGS` of it, then the flags of every level (a shared library)."""
    return (opt, *LEVEL_FLAGS.get(opt, ()), *_FLAGS)


#: the optimization levels :func:`load_library` accepts
OPT_LEVELS = ("-O0", "-Og", "-O1", "-O2", "-O3")


class CompilerError(Exception):
    """The C compiler is missing or failed on a generated source (the message says which)."""


@cache
def runtime_sources(search: bool = True) -> tuple[str, str]:
    """The fixed C parts: (before the model code, after it: the search, then its threads).

    ``search=False``: without the safety search (``s_*``, its tree store and its threads:
    ``runtime_tail.c`` under ``NO_SAFETY_SEARCH``, no ``runtime_tree.c`` or ``runtime_par.c``),
    for a library that runs none (the LTL product with ``-N``, the CTL state graph): about
    100 KB less C for the compiler (on SPIN's leader example ~1 s of ``gcc -O1``)."""
    pkg = resources.files("absmc.native")
    head = pkg.joinpath("runtime_head.c").read_text(encoding="utf-8")
    tail = pkg.joinpath("runtime_tail.c").read_text(encoding="utf-8")
    if not search:
        return head, "#define NO_SAFETY_SEARCH 1\n" + tail
    return (
        head,
        tail
        + pkg.joinpath("runtime_tree.c").read_text(encoding="utf-8")
        + pkg.joinpath("runtime_par.c").read_text(encoding="utf-8"),
    )


#: sources longer than this (characters) compile at ``-O1``: gcc takes about half the time of
#: ``-O2`` on large generated code, and the search loop runs as fast (measured on fischer.pml)
LARGE_SOURCE = 100_000


#: generated C the compiler gets through per second at each level (characters; gcc 12 on the
#: development machine: fischer.pml 90 KB, sort.pml 380 KB), for :func:`estimate_compile_s`
COMPILE_CHARS_PER_S = {"-O0": 300_000, "-O1": 130_000, "-O2": 80_000, "-O3": 70_000}


def estimate_compile_s(source_chars: int, opt: str) -> float:
    """A rough estimate of the seconds :func:`load_library` needs for a source of
    ``source_chars`` characters at ``opt`` (when it is not cached)."""
    return source_chars / COMPILE_CHARS_PER_S.get(opt, 80_000)


#: sources longer than this (characters) compile at ``-O0``: gcc's time grows with the source
#: at every level (``-O1``: ~130 KB/s, ``-O0``: ~270 KB/s), and on such a model it is most of
#: the model-to-verdict time; the search at ``-O0`` is about 2x slower, which pays only past
#: ~10^7 states (SPIN's mobile1: 3,091 commands from channel variables, 0.76 MB of C with the
#: commands' code shared by shape, :data:`absmc.native.shapes.SHARE_MIN_COMMANDS`: gcc -O0 1.1 s,
#: -O1 2.0 s, for a search of 0.6 s at -O1 and 1.7 s at -O0 on a loaded machine)
HUGE_SOURCE = 500_000


def default_opt(source_chars: int = 0) -> str:
    """``$ABSMC_NATIVE_OPT`` when it is one of :data:`OPT_LEVELS`, else ``-O2`` (``-O1`` for a
    source longer than :data:`LARGE_SOURCE` characters, ``-O0`` past :data:`HUGE_SOURCE`)."""
    env = os.environ.get(OPT_ENV, "")
    if env in OPT_LEVELS:
        return env
    if source_chars > HUGE_SOURCE:
        return "-O0"
    return "-O1" if source_chars > LARGE_SOURCE else "-O2"


def find_compiler() -> str | None:
    """The C compiler's path: ``$CC``, else ``cc``, ``gcc`` or ``clang`` on ``PATH``; ``None``
    when there is none."""
    env = os.environ.get(CC_ENV)
    if env:
        return shutil.which(env)
    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return found
    return None


def cache_dir() -> Path:
    """Where compiled libraries live: ``$ABSMC_CACHE_DIR``, else ``$XDG_CACHE_HOME/absmc/native``,
    else ``~/.cache/absmc/native``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "absmc" / "native"


#: the libraries loaded in this process, by the path of their cached file (a change of the
#: cache directory, as in tests, is a different library: nothing is taken from another cache)
_LOADED: dict[str, Any] = {}


def kill_compiler(proc: subprocess.Popen[str]) -> None:
    """End a compiler process started by :func:`load_library` and the processes it started
    (``cc1``, ``as``: its session); nothing when it has ended."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def _compile(argv: list[str], on_compile: Callable[[subprocess.Popen[str]], None] | None) -> None:
    """Run the compiler command ``argv`` in a session of its own. Raises
    :class:`CompilerError` when it fails or is ended."""
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    if on_compile is not None:
        on_compile(proc)
    ffi()  # its declarations are parsed (~0.1 s of Python) while the compiler runs
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        msg = (stderr or stdout).strip().splitlines()
        error = _Ended if proc.returncode < 0 else CompilerError
        raise error("the C compiler failed on the generated code: " + (msg[0] if msg else ""))


class _Ended(CompilerError):
    """The compiler was ended by a signal (:func:`kill_compiler`: a cancelled build)."""


#: the most translation units one source is compiled as (native/parts.py)
MAX_PARTS = 4


def _split(source: str, opt: str) -> Split | None:
    """``source`` as translation units to compile side by side: at ``-O0``, on a machine with
    more than one CPU for this process, a source whose process functions have more than
    :data:`~absmc.native.parts.SPLIT_MIN_CHARS` characters of code compiled at ``-O0``
    (:func:`~absmc.native.parts.split_source`)."""
    if opt != "-O0":
        return None
    return split_source(source, min(MAX_PARTS, available_cpus()))


def available_cpus() -> int:
    """The CPUs this process may run on (``os.sched_getaffinity``, else ``os.cpu_count``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _parallel(cc: str, opt: str, split: Split, tmp: Path, out: Path) -> list[str]:
    """One shell command compiling the parts of ``split`` side by side (``cc -c``), then
    linking them into ``out``; it fails when any compiler does."""
    flags = [f for f in compiler_flags(opt) if f != "-shared"]
    jobs: list[str] = []
    objs: list[str] = []
    for k, text in enumerate(split.parts):
        src = tmp / f"part{k}.c"
        src.write_text(text, encoding="utf-8")
        obj = str(tmp / f"part{k}.o")
        objs.append(obj)
        argv = [cc, *flags, "-c", "-o", obj, str(src)]
        jobs.append(" ".join(shlex.quote(a) for a in argv) + f" & p{k}=$!")
    waits = " ".join(f"wait $p{k} || st=1;" for k in range(len(objs)))
    link = [cc, "-shared", "-fPIC", "-pthread", "-o", str(out), *objs]
    script = "st=0; " + " ".join(jobs) + " " + waits
    script += ' [ "$st" = 0 ] || exit 1; exec ' + " ".join(shlex.quote(a) for a in link)
    return ["/bin/sh", "-c", script]


@cache
def ffi() -> Any:
    """The cffi ``FFI`` instance every loaded library shares (one ``cdef``), made on first use.

    Parsing :data:`CDEF` needs pycparser (~0.1-0.2 s of imports and parsing per run), so the
    parsed declarations are cached as cffi's out-of-line ABI module (``ffi_KEY.py`` in
    :func:`cache_dir`, keyed by the SHA-256 of :data:`CDEF` and cffi's version): a run imports
    only ``_cffi_backend``. Where the cache cannot be written the declarations are parsed in
    process (same ``FFI``)."""
    import importlib.util

    import _cffi_backend  # type: ignore[import-untyped]  # cffi's C part: no stubs

    version = str(getattr(_cffi_backend, "__version__", ""))
    key = hashlib.sha256((version + "\n" + CDEF).encode()).hexdigest()[:16]
    name = f"ffi_{key}"
    path = cache_dir() / f"{name}.py"
    if not path.exists():
        from cffi import FFI

        builder = FFI()
        builder.set_source(name, None)
        builder.cdef(CDEF)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
                os.replace(builder.compile(tmpdir=tmp), path)
        except OSError:
            return builder  # an FFI with the declarations parsed in process
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ffi


def _cache_key(cc: str, source: str, opt: str) -> str:
    flags = compiler_flags(opt)
    return hashlib.sha256((cc + " " + " ".join(flags) + "\n" + source).encode()).hexdigest()[:32]


def is_cached(source: str, opt: str) -> bool:
    """Whether :func:`load_library` would find ``source`` at ``opt`` already compiled (loaded
    in this process or in the cache directory), so that loading it costs no compiler run;
    ``False`` when there is no compiler."""
    cc = find_compiler()
    if cc is None:
        return False
    so = cache_dir() / f"m_{_cache_key(cc, source, opt)}.so"
    return str(so) in _LOADED or so.exists()


def load_library(
    source: str,
    opt: str = "-O2",
    on_compile: Callable[[subprocess.Popen[str]], None] | None = None,
) -> Any:
    """Compile ``source`` at optimization level ``opt`` (one of :data:`OPT_LEVELS`; ``-O0``
    compiles about three times faster, for tests) or take it from the cache, and return the
    loaded library (a cffi ``dlopen`` handle with the functions of :data:`CDEF`); at ``-O0`` a
    source with more than :data:`~absmc.native.parts.SPLIT_MIN_CHARS` characters of process
    functions compiled there is compiled as several translation units side by side
    (:func:`_split`, :mod:`absmc.native.parts`), and once more whole when that fails. The
    compiler runs in a session of its own; ``on_compile`` receives its process as it starts
    (each of them: a split build that fails starts another), so that another thread may end it
    (:func:`kill_compiler`). Raises :class:`CompilerError` when no
    compiler is found or compilation fails (or was ended), ``ValueError`` for another ``opt``,
    ``OSError`` when the cache is not writable."""
    if opt not in OPT_LEVELS:
        raise ValueError(f"optimization level {opt!r} is not one of {OPT_LEVELS}")
    cc = find_compiler()
    if cc is None:
        raise CompilerError("no C compiler found (set CC or install gcc)")
    key = _cache_key(cc, source, opt)
    d = cache_dir()
    so = d / f"m_{key}.so"
    lib = _LOADED.get(str(so))
    if lib is not None:
        return lib
    d.mkdir(parents=True, exist_ok=True)
    if not so.exists():
        with tempfile.TemporaryDirectory(dir=d) as tmp:
            out = Path(tmp) / "model.so"
            split = _split(source, opt)
            if split is not None:
                try:
                    _compile(_parallel(cc, opt, split, Path(tmp), out), on_compile)
                except _Ended:
                    raise
                except CompilerError:
                    split = None  # compiled again as one unit (native/parts.py)
            if split is None:
                src = Path(tmp) / "model.c"
                src.write_text(source, encoding="utf-8")
                _compile([cc, *compiler_flags(opt), "-o", str(out), str(src)], on_compile)
            os.replace(out, so)
    lib = ffi().dlopen(str(so))
    _LOADED[str(so)] = lib
    return lib
