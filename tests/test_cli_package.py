"""The CLI package and the engine registry: commands as in-process functions, exit codes of
typed and untyped errors, capability refusals in one place, and the regressions of issue 9
item 5 (``domains --op foo``, ``export --method types --to gcl``)."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pytest

from absmc.cli import check as check_module
from absmc.cli.args import CheckArgs
from absmc.cli.check import run_check
from absmc.cli.domains import run_domains
from absmc.cli.export import ExportArgs, run_export
from absmc.engines import registry
from absmc.errors import CapabilityError, OptionError
from absmc.kernel.run.options import CheckOptions
from absmc.lang.gcl import parse_gcl
from absmc.lang.loader import load_model
from tests.conftest import GCL_EXAMPLES, ROOT, run_cli, run_cli_subprocess

RAX = str(GCL_EXAMPLES / "rax.gcl")
PETERSON = str(GCL_EXAMPLES / "peterson.gcl")
DEOS = str(GCL_EXAMPLES / "deos.gcl")

ATOMIC = ROOT / "tests" / "promela_models" / "atomic_block.pml"  # has exclusive commands


def _streams() -> tuple[io.StringIO, io.StringIO]:
    return io.StringIO(), io.StringIO()


def test_check_is_a_function_of_its_arguments_and_streams() -> None:
    out, err = _streams()
    assert run_check(CheckArgs(model=RAX), out, err) == 1
    assert "verdict: violated" in out.getvalue() and err.getvalue() == ""
    out, err = _streams()
    assert run_check(CheckArgs(model=PETERSON, as_json=True), out, err) == 0
    assert '"verdict": "holds"' in out.getvalue()


def test_domains_unknown_operator_is_a_usage_error() -> None:
    out, err = _streams()
    code = run_domains(out, err, show="signs", ops=("foo",))
    assert code == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "unknown operator 'foo'" in lines[0]
    assert "internal error" not in err.getvalue()
    r = run_cli("domains", "--show", "signs", "--op", "foo")
    assert r.code == 2 and r.err.count("\n") == 1


def test_domains_unknown_abstraction_is_a_usage_error() -> None:
    out, err = _streams()
    assert run_domains(out, err, show="intervals") == 2
    assert "unknown abstraction 'intervals'" in err.getvalue()


def test_types_export_to_gcl_reads_back_and_keeps_its_verdicts(tmp_path: Path) -> None:
    out, err = _streams()
    args = ExportArgs(DEOS, "gcl", method="types", abstract=("period_id=signs",))
    assert run_export(args, out, err) == 0, err.getvalue()
    text = out.getvalue()
    system = parse_gcl(text, str(tmp_path / "deos_abs.gcl"))  # parses back
    assert {v.name for v in system.variables} >= {"period_id", "cp"}
    # the abstraction over-approximates DEOS, whose time_partitioning is violated: the
    # exported abstract model must still violate it (explicit search of the read-back text)
    path = tmp_path / "deos_abs.gcl"
    path.write_text(text)
    out, err = _streams()
    assert run_check(CheckArgs(model=str(path), properties=("time_partitioning",)), out, err) == 1


def test_types_export_to_gcl_refuses_wrap_around(tmp_path: Path) -> None:
    model = tmp_path / "wrap.pml"
    model.write_text("byte x;\nactive proctype P() {\n  do\n  :: x < 3 -> x = x + 1\n  od\n}\n")
    out, err = _streams()
    args = ExportArgs(str(model), "gcl", method="types", rest="point")
    assert run_export(args, out, err) == 2
    message = err.getvalue()
    assert out.getvalue() == "" and message.count("\n") == 1
    assert message.startswith("absmc: error: GCL cannot express this model's ")
    assert message.rstrip().endswith("export it --to promela")


def test_an_unexpected_exception_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_args: object, **_kw: object) -> None:
        raise ValueError("deep code says no\nsecond line")

    monkeypatch.setattr(check_module.registry, "run", boom)
    out, err = _streams()
    assert run_check(CheckArgs(model=RAX), out, err) == 4
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("absmc: internal error: ValueError: deep code says no")
    assert "--debug" in lines[0]
    out, err = _streams()
    assert run_check(CheckArgs(model=RAX), out, err, debug=True) == 4
    assert "Traceback (most recent call last)" in err.getvalue()
    r = run_cli("--debug", "check", RAX)
    assert r.code == 4 and "Traceback" in r.err


def test_capability_mismatch_is_refused_by_the_registry() -> None:
    model = ATOMIC
    system = load_model(model)
    with pytest.raises(CapabilityError) as info:
        registry.run("under", system, CheckOptions())
    assert (info.value.engine, info.value.aspect, info.value.value) == (
        "under",
        "feature",
        "exclusive",
    )
    assert "under" not in info.value.alternatives and "explicit" in info.value.alternatives
    with pytest.raises(CapabilityError) as info:
        registry.run("types", load_model(RAX), CheckOptions(store="bitstate"))
    assert info.value.aspect == "store" and info.value.value == "bitstate"
    out, err = _streams()
    assert run_check(CheckArgs(model=str(model), method="under"), out, err) == 2
    assert err.getvalue().startswith("absmc: error: --method under does not support atomic")


def test_engines_raise_typed_errors_without_flags() -> None:
    with pytest.raises(OptionError) as info:
        registry.run("explicit", load_model(RAX), CheckOptions(properties=["nope"]))
    assert info.value.option == "properties" and "--" not in info.value.message
    out, err = _streams()
    assert run_check(CheckArgs(model=RAX, properties=("nope",)), out, err) == 2
    assert err.getvalue().startswith("absmc: error: --property: the model has no property 'nope'")


def test_method_choices_and_options_come_from_the_registry() -> None:
    r = run_cli("check", "--help")
    assert r.code == 0
    choices = re.search(r"--method \[([^\]]+)\]", r.out)
    assert choices is not None and choices.group(1).split("|") == registry.names()
    for engine in registry.ENGINES:
        options = engine.default_options()
        assert dataclasses.is_dataclass(options) and isinstance(options, engine.options_type)
        for f in dataclasses.fields(options):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(options, f.name, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        CheckOptions().order = "dfs"  # type: ignore[misc]


def test_method_specific_options_are_refused_for_other_methods() -> None:
    for args, message in [
        (CheckArgs(model=RAX, abstract=("x=signs",)), "--abstract applies to --method types"),
        (
            CheckArgs(model=RAX, table=True),
            "--table applies to --method under, --method fourvalued and --method symbolic",
        ),
        (
            CheckArgs(model=RAX, refine=True),
            "--refine applies to --method fourvalued and --method symbolic",
        ),
        (CheckArgs(model=RAX, store="range"), "--store range applies to --method under only"),
        (
            CheckArgs(model=RAX, method="types", predicates=("w1 == 0",)),
            "--predicate applies to --method under, --method fourvalued, --method symbolic and "
            "Python programs (.py)",
        ),
    ]:
        out, err = _streams()
        assert run_check(args, out, err) == 2, args
        assert err.getvalue() == f"absmc: error: {message}\n"


def test_entry_point_in_a_subprocess() -> None:
    r = run_cli_subprocess("check", "examples/gcl/rax.gcl", "--json")
    assert r.code == 1 and '"verdict": "violated"' in r.out
    r = run_cli_subprocess("domains", "--show", "signs", "--op", "foo")
    assert r.code == 2 and r.err.count("\n") == 1
    r = run_cli_subprocess("check", str(ROOT / "no-such-model.gcl"))
    assert r.code == 2 and "cannot read" in r.err
