"""Options declared once (issue 23 item 5): the check command, its ``--help``, the defaults of
``CheckArgs`` and of the engines' options all come from (or agree with) the declarations; a new
engine is its package plus one registry entry — shown with an example engine defined here."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import pytest

import absmc
from absmc.cli import check as check_module
from absmc.cli.args import METHOD_SHARED, PROGRAM, SHARED, CheckArgs, registered_options
from absmc.cli.methods import method_cli
from absmc.engines import registry
from absmc.engines.engine import Capabilities, Engine
from absmc.engines.explicit import ENGINE as EXPLICIT
from absmc.engines.explicit import ExplicitOptions
from absmc.ir.system import System
from absmc.kernel.run.options import CheckOptions
from absmc.kernel.run.result import PropertyResult, Result, Stats, Trace, TraceStep, Verdict
from absmc.option import Option, defaults
from tests.conftest import GCL_EXAMPLES, run_cli

RAX = str(GCL_EXAMPLES / "rax.gcl")  # its property 'deadlock' is violated 7 steps deep


def _declared() -> tuple[Option, ...]:
    return (*SHARED, *METHOD_SHARED, *registered_options())  # the component's among them


def test_check_args_are_the_declared_options_with_their_defaults() -> None:
    declared = defaults(_declared())  # raises on a name declared twice
    names = {f.name for f in fields(CheckArgs)} - {"model", "entry_args", "engine_args"}
    assert names == set(declared)
    args = CheckArgs(model="m.gcl")
    for name, value in declared.items():
        assert getattr(args, name) == value, name
        assert args.is_default(name)


def test_shared_defaults_agree_with_the_kernel_options() -> None:
    d = defaults(_declared())
    kernel = CheckOptions()
    assert (kernel.store, kernel.bitstate_bits, kernel.hash_functions) == (
        d["store"],
        d["bitstate_bits"],
        d["hash_functions"],
    )
    assert (kernel.fairness, kernel.non_progress, kernel.keep_going, kernel.ltl) == (
        d["fairness"],
        d["non_progress"],
        d["keep_going"],
        d["ltl"],
    )
    assert kernel.check_deadlock is not d["no_deadlock"]


@pytest.mark.parametrize("name", ["explicit", "under", "types", "fourvalued", "symbolic"])
def test_an_engine_built_from_default_arguments_has_its_default_options(name: str) -> None:
    built = method_cli(name).build(CheckArgs(model="m.gcl"))
    assert built == registry.get(name).default_options()


def test_every_option_is_in_a_help_section_with_its_default() -> None:
    r = run_cli("check", "--help")
    assert r.code == 0
    for title in ("Limits", "Output", "Python programs (.py):", "--method symbolic:"):
        assert title in r.out
    section = r.out.split("--method symbolic:")[1]
    assert "--widen-delay K" in section and "[default: 2; x>=0]" in section
    for o in _declared():
        assert o.flag in r.out, o.name


def test_replay_and_simulate_share_the_trace_options() -> None:
    replay = run_cli("replay", "--help").out
    simulate = run_cli("simulate", "--help").out
    for flag in ("-N, --property NAME", "--stop-at N", "-i, --interactive", "-D NAME[=VALUE]"):
        assert flag in replay and flag in simulate
    assert "With --replay: the property" in simulate and "With --replay" not in replay


# -- a new engine: its package (here: this test) and one registry entry ----------------------


@dataclass(frozen=True)
class BoundedOptions:
    """The example engine's options: the depth it searches to."""

    depth: int = 3


def _bounded_check(system: System, options: CheckOptions, own: BoundedOptions) -> Result:
    limits = replace(options.limits, max_depth=own.depth)
    return EXPLICIT.check(system, replace(options, limits=limits), ExplicitOptions("python"))


BOUNDED = Engine(
    name="bounded",
    options_type=BoundedOptions,
    capabilities=Capabilities(),
    description="an example: explicit search to a fixed depth",
    check=_bounded_check,
    options=(
        Option(
            "bounded_depth",
            ("--bounded-depth",),
            "[bounded] Search this many steps deep.",
            default=3,
            kind="int",
            min=0,
            metavar="N",
            show_default=True,
            group="--method bounded",
        ),
    ),
    build_options=lambda values: BoundedOptions(values["bounded_depth"]),
)


@pytest.fixture
def bounded_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry entry: ``ENGINES`` with the example engine (the check command is built from
    the registry as ``absmc.cli.check`` builds it on import)."""
    monkeypatch.setattr(registry, "ENGINES", (*registry.ENGINES, BOUNDED))
    monkeypatch.setattr(check_module, "check_command", check_module.make_check_command())


def _verdicts(out: str) -> dict[str, Any]:
    return {r["property"]: r["verdict"] for r in json.loads(out)["results"]}


@pytest.mark.usefixtures("bounded_registered")
def test_a_registered_engine_gets_its_option_from_the_command_line() -> None:
    help_text = run_cli("check", "--help").out
    assert "bounded" in help_text.split("--method [")[1].split("]")[0].split("|")
    assert "--method bounded:" in help_text
    assert "--bounded-depth N" in help_text.split("--method bounded:")[1]
    base = ("check", RAX, "--method", "bounded", "--no-trail", "--json")
    shallow = run_cli(*base)  # the declared default: 3 steps, too shallow for the violation
    assert shallow.code == 3 and _verdicts(shallow.out)["deadlock"] == "unknown"
    deep = run_cli(*base, "--bounded-depth", "10")
    assert deep.code == 1 and _verdicts(deep.out)["deadlock"] == "violated"
    other = run_cli("check", RAX, "--bounded-depth", "10", "--no-trail")
    assert other.code == 2 and "--bounded-depth applies to --method bounded" in other.err
    args = CheckArgs.from_params({"model": RAX, "method": "bounded", "bounded_depth": 10})
    assert not args.is_default("bounded_depth") and args.value("bounded_depth") == 10
    assert method_cli("bounded").build(args) == BoundedOptions(10)


@dataclass(frozen=True)
class CounterOptions:
    """The second example engine's options: the bound its counter must stay below."""

    bound: int = 10


def _counter_check(path: str, options: CheckOptions, own: CounterOptions) -> Result:
    """A model file of its own (``.counter``: the steps a counter from 0 takes, one number a
    line): the counter stays below ``own.bound`` (an exhaustive check of a finite run)."""
    values = [0]
    for line in Path(path).read_text(encoding="utf-8").split():
        values.append(values[-1] + int(line))
    first = next((k for k, v in enumerate(values) if v >= own.bound), None)
    verdict = Verdict.HOLDS if first is None else Verdict.VIOLATED
    steps = [TraceStep(k, {"c": v}) for k, v in enumerate(values[: (first or 0) + 1])]
    trace = Trace(tuple(steps), replayed=True) if first is not None else None
    stats = Stats(len(values), len(values) - 1, len(values) - 1)
    reason = (
        "the run ends below the bound" if first is None else f"c >= {own.bound} at step {first}"
    )
    return Result(
        path,
        "counter",
        (PropertyResult("below", "invariant", "counter", verdict, reason, stats, trace),),
    )


#: a second example, an engine that reads its model files itself (as the component checker
#: reads .py programs): one registry entry with ``files``
COUNTER = Engine(
    name="counter",
    options_type=CounterOptions,
    capabilities=Capabilities(),
    description="an example: a counter's run read from a .counter file",
    check=_counter_check,
    options=(
        Option(
            "counter_bound",
            ("--counter-bound",),
            "[.counter] The bound the counter stays below.",
            default=10,
            kind="int",
            metavar="N",
            group="Counters (.counter)",
        ),
    ),
    build_options=lambda values: CounterOptions(values["counter_bound"]),
    files=(".counter",),
    files_text="counters (.counter)",
)


def test_an_engine_that_reads_its_own_files_is_one_registry_entry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(registry, "ENGINES", (*registry.ENGINES, COUNTER))
    monkeypatch.setattr(check_module, "check_command", check_module.make_check_command())
    help_text = run_cli("check", "--help").out
    assert "--counter-bound N" in help_text.split("Counters (.counter):")[1]
    model = tmp_path / "run.counter"
    model.write_text("3\n4\n5\n", encoding="utf-8")  # 0, 3, 7, 12
    low = run_cli("check", str(model), "--json")  # the default bound, 10: exceeded at step 3
    assert low.code == 1 and _verdicts(low.out) == {"below": "violated"}
    assert len(json.loads(low.out)["results"][0]["trace"]) == 4
    high = run_cli("check", str(model), "--counter-bound", "13", "--json")
    assert high.code == 0 and _verdicts(high.out) == {"below": "holds"}
    assert json.loads(high.out)["method"] == "counter"
    other = run_cli("check", RAX, "--counter-bound", "13", "--no-trail")
    assert other.code == 2 and "--counter-bound applies to counters (.counter)" in other.err
    wrong = run_cli("check", str(model), "--method", "under")
    assert wrong.code == 2 and "checked by --method counter" in wrong.err
    assert absmc.check(model, bound=4).verdict == "violated"  # the API chooses it too


@pytest.mark.usefixtures("bounded_registered")
def test_a_registered_engine_cannot_redeclare_a_shared_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clash = replace(BOUNDED, name="clash", options=(replace(BOUNDED.options[0], name="timeout"),))
    monkeypatch.setattr(registry, "ENGINES", (*registry.ENGINES, clash))
    with pytest.raises(ValueError, match="'timeout' is declared twice"):
        check_module.make_check_command()


def test_messages_name_options_by_their_declared_flags() -> None:
    r = run_cli("check", "prog.py", "--entry", "main", "--component", "f", "-D", "N=2")
    assert r.code == 2 and "-D applies to models, not to Python programs" in r.err
    r = run_cli("check", RAX, "--widen-delay", "3", "--no-trail")
    assert r.code == 2 and "--widen-delay applies to --method symbolic" in r.err


# -- --reduce/--no-reduce: one declared default, the same in every entry point ---------------

_POR_MODEL = (  # three independent loops: SPIN's partial-order reduction stores 55 of 585
    "byte g;\n"
    "active [3] proctype P() { byte l; do :: l < 4 -> l++ :: l >= 4 -> break od;"
    " g++; assert(g <= 3) }\n"
)


def test_reduce_has_one_default_for_models_and_one_for_programs(tmp_path: Path) -> None:
    from absmc.cli.args import declared
    from absmc.cli.check import check_options
    from absmc.component import ComponentOptions
    from absmc.kernel.run.options import reduces
    from absmc.lang.loader import load_model

    assert declared("reduce").value_when_absent is None  # not given: the kind of input decides
    assert reduces(None) is True and reduces(None, program=True) is False
    assert reduces(False) is False and reduces(True, program=True) is True
    assert CheckOptions().reduce is reduces(None)  # engines called directly: as absmc check
    assert ComponentOptions().reduce is reduces(None, program=True)
    assert check_options(CheckArgs(model="m.pml"), None).reduce is True
    assert check_options(CheckArgs(model="m.pml", reduce=False), None).reduce is False
    model = tmp_path / "m.pml"
    model.write_text(_POR_MODEL)
    cli = json.loads(run_cli("check", str(model), "--json", "--no-trail").out)
    api = absmc.check(model)
    engine = registry.run("explicit", load_model(model, reduce=True))
    full = absmc.check(model, reduce=False)
    counts = [cli["results"][0]["stats"]["states"]] + [
        r.results[0].stats.states for r in (api, engine, full)
    ]
    assert counts == [55, 55, 55, 585]


def test_a_program_reduces_only_when_asked(tmp_path: Path) -> None:

    path = tmp_path / "two.py"
    path.write_text(
        "import threading\n\n"
        "def work(box: list[int], i: int) -> None:\n"
        "    box[i] = box[i] + 1\n"
        "    box[i] = box[i] + 1\n\n"
        "def main() -> None:\n"
        "    box = [0, 0]\n"
        "    ts = [threading.Thread(target=work, args=(box, i)) for i in range(2)]\n"
        "    for t in ts:\n"
        "        t.start()\n"
        "    for t in ts:\n"
        "        t.join()\n"
        "    assert box == [2, 2]\n"
    )
    given: dict[str, Any] = {"entry": "main", "component": "main,work"}
    default = absmc.check(path, **given).results[0].stats.extra["reduction"]
    asked = absmc.check(path, reduce=True, **given).results[0].stats.extra["reduction"]
    base = ("check", str(path), "--entry", "main", "--component", "main,work", "--json")
    cli = json.loads(run_cli(*base).out)["results"][0]["stats"]["reduction"]
    assert (default, cli, asked) == ("none", "none", "persistent-sets")


def test_a_programs_options_are_declared_in_the_component_package() -> None:
    import subprocess
    import sys

    from absmc.component import ComponentOptions
    from absmc.component.options import OPTIONS

    assert PROGRAM is OPTIONS  # the CLI lists the component checker's declarations
    assert registry.get("component").options is OPTIONS  # as the component engine's options
    granularity = next(o for o in OPTIONS if o.name == "granularity")
    assert granularity.default == ComponentOptions().granularity
    probe = (
        "import sys, absmc.cli.check, absmc.component\n"
        "print('absmc.component.check' in sys.modules, absmc.component.check.__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "check"]  # the checker loads when used; check is the function
