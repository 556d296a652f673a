"""An independent oracle for the component checker (issue 27): the *real* program runs on
CPython, one thread at a time between scheduling points (``sys.settrace`` line events and a
baton per thread, :mod:`.runtime`), with baton-aware ``threading``/``queue`` primitives
(:mod:`.primitives`); :mod:`.explore` enumerates every schedule of a small program and
:mod:`.confirm` re-executes a ``violated`` trace of absmc with its schedule forced. The
runtime, the primitives and the enumeration import only the standard library and the
program, never absmc's translation. Details: ``docs/component.md`` (The CPython oracle).
"""

from absmc.component.oracle.explore import Exploration, explore, explore_file
from absmc.component.oracle.runtime import Program, Run, RunResult, Violation

__all__ = ["Exploration", "Program", "Run", "RunResult", "Violation", "explore", "explore_file"]
