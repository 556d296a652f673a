"""`absmc simulate` writes what the model prints (Promela printf/printm), as SPIN's simulator."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .conftest import run_cli
from .spin import require_spin

MODEL = """\
mtype = { red, green };
byte x = 3;
mtype c = green;
active proctype P() {
  printf("start x=%d\\n", x);
  x = x * 2;
  printf("x=%d hex=%x oct=%o c=%e char=%c pct=%%\\n", x, 255, 8, c, 65);
  printm(c);
  printf("\\n");
  atomic { x++; printf("in atomic %d\\n", x); x++ }
  d_step { x = x + 10; printf("d_step %d\\t|\\n", x) }
  printf("end %d\\n", x)
}
"""


def _spin_lines(model: Path) -> list[str]:
    """SPIN's simulation output without its per-process indentation and summary lines."""
    run = subprocess.run(
        ["spin", model.name], cwd=model.parent, capture_output=True, text=True, check=True
    )
    lines = [line.strip() for line in run.stdout.splitlines()]
    return [line for line in lines if line and not line.endswith("process created")]


def test_printf_output_is_spins(tmp_path: Path) -> None:
    require_spin()
    model = tmp_path / "prints.pml"
    model.write_text(MODEL)
    r = run_cli("simulate", str(model), "--seed", "1")
    assert r.code == 0, r.err
    table_starts = r.out.index(f"{model}: random run")
    ours = [line.strip() for line in r.out[:table_starts].splitlines() if line.strip()]
    assert ours == _spin_lines(model)
    assert "d_step 18\t|" in r.out


def test_printf_output_in_json_and_evaluated_in_each_step(tmp_path: Path) -> None:
    model = tmp_path / "count.pml"
    model.write_text(
        "byte i;\nactive proctype P() {\n"
        '  do\n  :: i < 3 -> printf("i=%d ", i); i++\n  :: else -> break\n  od\n}\n'
    )
    r = run_cli("simulate", str(model), "--json", "--seed", "3")
    assert r.code == 0, r.err
    assert json.loads(r.out)["output"] == "i=0 i=1 i=2 "
