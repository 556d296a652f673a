"""The LTL product of a model of a System (:class:`~absmc.kernel.model.irsemantics.IRSemantics`):
where the product needs the IR — the automaton's edge guards compiled over the System's
variables (:func:`guard_fn`), SPIN's order of the steps (:func:`spin_order`: the
highest-numbered process first) and the processes of SPIN's weak fairness
(:func:`fair_product`). The product itself (:mod:`absmc.kernel.ltl.product`) and the fairness
counter (:mod:`absmc.kernel.ltl.fairness`) read only the model interface.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from absmc.codegen.python import compile_expr_fn
from absmc.ir.ltl import Automaton
from absmc.ir.steps import State
from absmc.ir.system import System
from absmc.kernel.ltl.fairness import FairSemantics
from absmc.kernel.ltl.product import ProductSemantics
from absmc.kernel.model.irsemantics import IRSemantics

__all__ = ["fair_product", "guard_fn", "product_of", "spin_order"]


def guard_fn(system: System, guard: Any) -> Callable[[State], bool]:
    """An edge guard (an IR condition over ``system``'s variables) as a predicate on system
    states (a failing evaluation, such as a division by zero, makes the guard false)."""
    fn = compile_expr_fn(system, guard)

    def holds(s: State) -> bool:
        try:
            return bool(fn(s))
        except (ZeroDivisionError, IndexError, ValueError, OverflowError):
            return False

    return holds


def spin_order(sem: IRSemantics) -> Callable[[int], int]:
    """Sort key of a step label of ``sem`` in SPIN's order: the highest-numbered process first
    (pan tries ``_nr_pr - 1`` down to 0), a process's steps in their own order."""
    system = sem.system
    names = {p.name: i for i, p in enumerate(system.processes)}

    def key(label: int) -> int:
        cmds = sem.commands_of(label)
        return -names.get(system.commands[cmds[0]].process, 0) if cmds else 0

    return key


def product_of(
    sem: IRSemantics,
    automaton: Automaton,
    stutter: bool = True,
    safety: bool = False,
    deadlock: bool = False,
    spin_ordered: bool = False,
) -> ProductSemantics:
    """``sem`` × ``automaton`` (:class:`~absmc.kernel.ltl.product.ProductSemantics`), its guards
    compiled over ``sem``'s System, its steps in SPIN's order with ``spin_ordered``."""
    system = sem.system
    return ProductSemantics(
        sem,
        automaton,
        lambda g: guard_fn(system, g),
        stutter=stutter,
        safety=safety,
        deadlock=deadlock,
        order=spin_order(sem) if spin_ordered else None,
    )


def fair_product(
    product: ProductSemantics, sem: IRSemantics, spin_restart: bool = False
) -> FairSemantics:
    """``product`` (of ``sem``) with SPIN's weak-fairness counter over ``sem``'s processes: a
    process exists while its program counter is not 0 (Promela's process slots; a process
    without one, GCL's, always exists). ``spin_restart``: see
    :class:`~absmc.kernel.ltl.fairness.FairSemantics`."""
    system = sem.system
    index = {p.name: i for i, p in enumerate(system.processes)}
    pcs = [system.index_of[p.pc] if p.pc is not None else -1 for p in system.processes]

    def live(s: State) -> int:
        for i in range(len(pcs) - 1, -1, -1):
            if pcs[i] < 0 or s[pcs[i]] != 0:
                return i + 1
        return 0

    process_of = [index[c.process] for c in system.commands]
    return FairSemantics(product, len(index), process_of, live, spin_restart)
