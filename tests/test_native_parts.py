"""A large generated C source compiled as several translation units side by side
(absmc.native.parts, build.load_library at -O0): the process functions that move, the library's
outcomes equal to the one unit's, and a split build that fails compiled whole; the LTL
tables' analyses in a forked child (background.ForkedValue) beside the source's generation."""

from __future__ import annotations

from pathlib import Path

import pytest

import absmc.native.build as build
from absmc.engines.explicit.check import check_explicit
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.lang.loader import load_model
from absmc.native import cgen, native_available
from absmc.native.parts import LINK, MODEL_MARK, Split, split_source

from .conftest import EXAMPLES

MODELS = Path(__file__).resolve().parent / "promela_models"

pytestmark = [
    pytest.mark.skipif(not native_available(), reason="no C compiler"),
    pytest.mark.usefixtures("native_fast_compile"),  # -O0: the level that splits
]

_SIG = "(ctx_t *C, const int64_t *v, int flags)"


def _synthetic() -> str:
    """A source shaped as CGen.source's: a head, a shape function with its table, three
    process functions (one calling a static function of the model code) and a dispatch table."""
    head = "#define NV 2\nstatic inline int64_t i_neg(int64_t a) { return -a; }\n"
    body = [
        "static const int64_t K0[][2] = {",
        "{1, 2},",
        "{3, 4}};",
        "static void S0(ctx_t *C, const int64_t *v, int flags, const int64_t *q) {",
        "    m_sink(C, flags, 0, v);",
        "}",
        f"static void fn0{_SIG} {{",
        "    /* pid0: x = helper() */",
        "    if (v[0] == i_neg(1)) S0(C, v, flags, K0[0]);",
        "}",
        f"static void fn1{_SIG} {{",
        "    helper(C);",
        "}",
        f"static void fn2{_SIG} {{",
        '    if (v[1] == 2) S0(C, v, flags, K0[1]); /* "helper" */',
        "}",
        "static const fn_t m_fns[3] = {fn0, fn1, fn2};",
    ]
    return head + MODEL_MARK + "\n" + "\n".join(body) + "\n"


def test_only_process_functions_that_use_nothing_of_part_0_move() -> None:
    """fn0 and fn2 use the head's helpers, the shape function and its table (names in comments
    and strings do not count); fn1 calls ``helper``, which only part 0 has, and stays. Part 0
    keeps the order, gives the shape function and its table external linkage and declares the
    moved functions; the other parts declare what they call."""
    split = split_source(_synthetic(), 3, min_chars=0)
    assert split is not None
    assert split.moved == ("fn0", "fn2")
    part0, *others = split.parts
    assert len(others) == 2
    assert f"static void fn1{_SIG} {{" in part0
    assert f"static void fn0{_SIG}" not in part0 and f"static void fn2{_SIG}" not in part0
    assert f"{LINK} void fn0{_SIG};" in part0
    assert f"{LINK} void S0(ctx_t *C, const int64_t *v, int flags, const int64_t *q) {{" in part0
    assert f"{LINK} const int64_t K0[][2] = {{" in part0
    assert part0.index("K0[][2] = {") < part0.index("m_fns[3]")
    for part in others:
        assert part.startswith("#define NV 2\n")
        assert f"extern {LINK} const int64_t K0[][2];" in part
        assert "{1, 2}" not in part  # the table's rows are part 0's alone
    assert sum(f"{LINK} void fn0{_SIG} {{" in p for p in others) == 1
    assert sum(f"{LINK} void fn2{_SIG} {{" in p for p in others) == 1


def test_a_head_function_that_reads_part_0s_objects_keeps_its_callers_there() -> None:
    """A head function whose body reads a table the head only declares (defined in part 0: a
    copy in another part would read its own, empty one), or calls such a function, is not
    the other parts' to copy: a process function calling it stays in part 0."""
    head = (
        "#define NV 2\n"
        "static const int32_t m_fn_of[4];\n"
        "static void close_chain(ctx_t *C, int ci);\n"
        "static int first(void) { return m_fn_of[0]; }\n"
        "static int chained(ctx_t *C) {\n"
        "    close_chain(C, 0);\n"
        "    return 1;\n"
        "}\n"
        "static int via(void) { return first() + 1; }\n"
        "static inline int64_t i_neg(int64_t a) { return -a; }\n"
    )
    body = [
        f"static void fn{k}{_SIG} {{\n    x = {call};\n}}"
        for k, call in enumerate(["first()", "chained(C)", "via()", "i_neg(v[0])"])
    ]
    split = split_source(head + MODEL_MARK + "\n" + "\n".join(body) + "\n", 2, min_chars=0)
    assert split is not None and split.moved == ("fn3",)


def test_a_small_source_or_one_part_is_not_split() -> None:
    assert split_source(_synthetic(), 3) is None  # shorter than SPLIT_MIN_CHARS
    assert split_source(_synthetic(), 1, min_chars=0) is None
    assert split_source(_synthetic().replace(MODEL_MARK, ""), 3, min_chars=0) is None


def _check(
    system: System, opts: CheckOptions, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[str, str, int, int]]:
    monkeypatch.setenv("ABSMC_CACHE_DIR", str(cache))  # a library of its own
    result = check_explicit(system, opts, "native")
    return [
        (r.property, r.verdict.value, r.stats.states, r.stats.transitions) for r in result.results
    ]


@pytest.mark.parametrize(
    ("model", "options", "shared", "violated"),
    [
        ("promela/fischer_buggy.pml", CheckOptions(), False, True),
        ("ltl/leader.pml", CheckOptions(ltl="at_most_one"), False, False),
        # every command shared by shape, runs of guarded calls as tables (shapes.tabulate)
        ("promela/fischer_buggy.pml", CheckOptions(), True, True),
        (str(MODELS / "chan_reassigned.pml"), CheckOptions(keep_going=True), True, True),
    ],
)
def test_a_split_library_gives_the_outcomes_of_the_whole_one(
    model: str,
    options: CheckOptions,
    shared: bool,
    violated: bool,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The model's library compiled as three units (every source splits) gives the same
    verdicts, states and transitions as the one unit; the split build ran (functions moved)."""
    if shared:
        monkeypatch.setattr(cgen, "SHARE_MIN_COMMANDS", 1)
    system = load_model(EXAMPLES / model, reduce=True)
    monkeypatch.setattr(build, "_split", lambda source, opt: None)
    whole = _check(system, options, tmp_path / "whole", monkeypatch)
    splits: list[Split] = []

    def three(source: str, opt: str) -> Split | None:
        split = split_source(source, 3, min_chars=0)
        if split is not None:
            splits.append(split)
        return split

    monkeypatch.setattr(build, "_split", three)
    parted = _check(system, options, tmp_path / "parts", monkeypatch)
    assert splits and all(s.moved for s in splits)
    assert parted == whole
    assert any(v == "violated" for _, v, _, _ in whole) == violated
    # chan_reassigned's tables of guards went to another part (fischer has no run of three
    # guarded calls to make one)
    assert ("static const grow_t R[]" in "".join(p for s in splits for p in s.parts[1:])) == (
        "chan" in model
    )


def test_a_failed_split_build_is_compiled_whole(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A part that does not compile (here: broken on purpose) costs a second compiler run of
    the whole source, not the check."""
    system = load_model(EXAMPLES / "promela" / "fischer_buggy.pml", reduce=True)
    monkeypatch.setattr(build, "_split", lambda source, opt: None)
    whole = _check(system, CheckOptions(), tmp_path / "whole", monkeypatch)
    broken: list[str] = []

    def bad(source: str, opt: str) -> Split:
        broken.append(source)
        return Split((source, "this is not C;\n"), ("fn0",))

    monkeypatch.setattr(build, "_split", bad)
    assert _check(system, CheckOptions(), tmp_path / "again", monkeypatch) == whole
    assert broken


def test_a_forked_value_is_computed_in_a_child_while_the_caller_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ForkedValue (the LTL tables' analyses beside the source's generation): the value comes
    from a child process; where forking is off, from the caller; an error is the caller's
    own (computed again there); a cancelled child leaves no process behind."""
    import os

    from absmc.native import background

    monkeypatch.delenv(background.FORK_ENV, raising=False)
    assert background.ForkedValue(os.getpid).result() != os.getpid()

    def fails() -> int:
        raise ValueError("no value")

    with pytest.raises(ValueError, match="no value"):
        background.ForkedValue(fails).result()
    slow = background.ForkedValue(lambda: __import__("time").sleep(30))
    child = slow._pid
    slow.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)  # reaped
    monkeypatch.setenv(background.FORK_ENV, "0")
    assert background.ForkedValue(os.getpid).result() == os.getpid()


def test_killing_a_source_generator_ends_the_analyses_it_forked(tmp_path: Path) -> None:
    """``auto`` kills its forked source generator when Python decides first; the analyses that
    generator forked beside it (ForkedValue) end with it: they share its process group."""
    import threading
    import time

    from absmc.native import background

    if not background.can_fork():
        pytest.skip("no fork here")
    mark = tmp_path / "grandchild"

    def make() -> str:
        analysis = background.ForkedValue(lambda: time.sleep(60))
        (tmp_path / "writing").write_text(str(analysis._pid))
        (tmp_path / "writing").rename(mark)  # whole, or not yet there
        time.sleep(60)
        return ""

    pids: list[int] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            background.run_forked(make, pids.append)
        except RuntimeError as e:  # the generator died: as a cancelled build
            failed.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    for _ in range(600):
        if mark.exists():
            break
        time.sleep(0.05)
    grandchild = int(mark.read_text())
    background.kill_child(pids[0])
    worker.join(30)
    assert failed and not worker.is_alive()
    for _ in range(200):  # gone, or a zombie left to be reaped by init
        try:
            state = Path(f"/proc/{grandchild}/stat").read_text().split(") ")[1][0]
        except (FileNotFoundError, ProcessLookupError):
            state = "gone"
        if state in ("gone", "Z", "X"):
            break
        time.sleep(0.05)
    assert state in ("gone", "Z", "X")


def test_the_safety_tables_analysed_in_a_child_are_those_analysed_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CGen.source analyses the safety search's safe locations in a forked child (from
    FORK_ANALYSIS_MIN_COMMANDS commands on) while it generates the rest: the same C as the
    analysis in place; a generation that fails ends the child."""
    import os

    from absmc.native import background

    monkeypatch.delenv(background.FORK_ENV, raising=False)
    system = load_model(EXAMPLES / "promela" / "fischer_buggy.pml", reduce=True)
    head, tail = build.runtime_sources()
    monkeypatch.setattr(cgen, "FORK_ANALYSIS_MIN_COMMANDS", 10**9)
    in_place = cgen.CGen(system, ()).source(head, tail)
    monkeypatch.setattr(cgen, "FORK_ANALYSIS_MIN_COMMANDS", 1)
    children: list[int] = []
    real = background.ForkedValue.__init__

    def counted(self: background.ForkedValue[object], compute: object) -> None:
        real(self, compute)  # type: ignore[arg-type]
        children.append(self._pid)

    monkeypatch.setattr(background.ForkedValue, "__init__", counted)
    assert cgen.CGen(system, ()).source(head, tail) == in_place
    assert len(children) == 1 and children[0] > 0
    gen = cgen.CGen(system, ())

    def broken() -> None:
        raise cgen.Unsupported("broken on purpose")

    monkeypatch.setattr(gen, "functions", broken)  # before the tables take the value
    with pytest.raises(cgen.Unsupported):
        gen.source(head, tail)
    assert len(children) == 2
    with pytest.raises(ChildProcessError):
        os.waitpid(children[1], os.WNOHANG)  # ended and reaped
