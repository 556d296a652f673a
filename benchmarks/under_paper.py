#!/usr/bin/env python3
"""Wall time and prover calls of ``--method under`` on the runs of paper 000 (CAV 2005).

Prints, for each run, the per-iteration table (concrete states, abstract states, new
predicates, prover calls, cache hits) and the total wall time, next to the paper's figures.
Usage: ``python benchmarks/under_paper.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

from absmc.engines.under import UnderOptions, check_under
from absmc.kernel.run.options import CheckOptions
from absmc.lang.gcl import parse_gcl_expr, parse_gcl_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "gcl"

RUNS: list[tuple[str, str, dict[str, object], bool]] = [
    ("rax, Fig. 7 (keep going, 4 iterations)", "rax", {"max_iterations": 4}, True),
    ("rax, first violation", "rax", {}, False),
    ("rax with e1 >= 0, e2 >= 0", "rax", {"predicates": ("e1 >= 0", "e2 >= 0")}, True),
    ("bakery, Fig. 5", "bakery", {}, False),
    ("nonterminating, 10 iterations", "nonterminating", {"max_iterations": 10}, False),
    ("nonterminating, --concrete-after 3", "nonterminating", {"concrete_after": 3}, False),
]


def main() -> None:
    for title, name, kw, keep_going in RUNS:
        system = parse_gcl_file(EXAMPLES / f"{name}.gcl")
        kw = dict(kw)
        preds = tuple(parse_gcl_expr(p, system) for p in kw.pop("predicates", ()))  # type: ignore[attr-defined]
        t0 = time.monotonic()
        result = check_under(
            system,
            CheckOptions(keep_going=keep_going),
            UnderOptions(predicates=preds, **kw),  # type: ignore[arg-type]
        )
        wall = time.monotonic() - t0
        rows = result.results[0].iterations or []
        calls = sum(int(r["prover_calls"]) for r in rows)
        hits = sum(int(r["cache_hits"]) for r in rows)
        print(
            f"== {title}: {result.verdict.value}, {len(rows)} iterations, {wall:.3f} s wall, "
            f"{calls} prover calls, {hits} cache hits"
        )
        for r in rows:
            preds_s = ", ".join(r["new_predicates"]) or "-"  # type: ignore[arg-type]
            counts = f"{r['iteration']:>3} {r['concrete_states']:>5} {r['abstract_states']:>5}"
            print(f"   {counts}  {preds_s}")


if __name__ == "__main__":
    main()
