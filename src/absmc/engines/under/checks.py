"""The precision checks of αSEARCH (paper 000, Fig. 2 and Sections 4, 6, 7).

For an explored concrete transition ``s --i--> s'`` with abstract states ``a = α(s)`` and
``a' = α(s')``:

* guard check (``i`` enabled): ``α(s) ⇒ ok_i ∧ g_i`` — else the atoms are new predicates
  (``ok_i``: executing ``i`` is no model error, :func:`success_condition`);
* guard check (``i`` disabled): ``α(s) ⇒ ok_i ∧ ¬g_i`` or ``α(s) ⇒ ¬ok_i`` (every state of
  ``α(s)`` blocks ``i`` the same way: disabled, or a model error) — else the atoms are new
  predicates;
* exactness: ``α(s) ⇒ α(s')[e_i/x]`` — else the conjuncts of ``α(s')[e_i/x]`` that are not
  provable become new predicates (the Section 7 optimisation);
* labelling: ``α(s)`` decides every property's condition — else its atoms are new predicates
  (keeps Theorem 1's ``AP ⊆ Φ`` true for properties over data).

Every formula reads expressions with one semantics of division by zero
(:mod:`absmc.logic.definedness`): the prover's ``x / 0`` is unspecified, so each read is guarded
by the expression's definedness, and ``α(s)`` (three-valued predicates) is satisfied by ``s``.

Control values of ``a`` are substituted first, so checks already decided by the program
counters need no prover call. With ``prover=None`` (the lightweight approach of Section 6) no
validity is checked: every non-trivial atom is added. Results are cached per
``(a, i, a')`` — they depend only on the abstract states — and the prover caches formulas
across iterations. A prover ``unknown`` counts as *not valid*.
"""

from __future__ import annotations

from absmc.engines.under.abstraction import Abstraction, AbstractState
from absmc.ir.expr import Const, Expr, Op, Var, atoms, conj, const, neg, substitute
from absmc.ir.linear import canonical_atom
from absmc.ir.simplify import simplify
from absmc.ir.sorts import BoolSort
from absmc.ir.system import Command, Property, System
from absmc.logic import interrupt
from absmc.logic.definedness import definedness, error_condition, violation_condition
from absmc.logic.prover import Prover


def success_condition(system: System, command: Command) -> Expr:
    """The condition under which executing ``command`` is not a model error: no ``errors``
    condition holds, evaluating the guard divides by no zero, and where the guard holds every
    right-hand side and assertion is defined and every assignment to an ``overflow="error"``
    range stays in range (:func:`absmc.logic.definedness.error_condition`)."""
    return neg(error_condition(system, command, None, command.asserts))


class PrecisionChecks:
    """The checks above for one iteration (one abstraction); see module docstring."""

    def __init__(
        self,
        system: System,
        abstraction: Abstraction,
        prover: Prover | None,
        signals: int | None = None,
    ) -> None:
        """``signals``: the count of Ctrl-C/SIGTERM (:func:`absmc.logic.interrupt.count`) when
        the check began (default: now); one arriving later ends the next prover call with
        ``KeyboardInterrupt`` before it starts."""
        self.system = system
        self.alpha = abstraction
        self.prover = prover
        self.signals = interrupt.count() if signals is None else signals
        self.order = dict(system.index_of)
        self._cache: dict[tuple[object, ...], tuple[Expr, ...]] = {}
        self._ok = {c.index: success_condition(system, c) for c in system.commands}
        self._post: dict[tuple[int, Expr], Expr] = {}
        self._at: dict[tuple[tuple[int, ...], Expr], Expr] = {}
        # (abstract state, goal) -> unproved?; goals come from self._at, so a repeated goal is
        # the same object and the lookup is an identity match, not a deep comparison
        self._decided: dict[tuple[AbstractState, Expr], bool] = {}

    def at(self, a: AbstractState, e: Expr) -> Expr:
        """``e`` with the control values of ``a`` substituted, simplified (cached)."""
        key = (a[:-1], e)
        hit = self._at.get(key)
        if hit is None:
            hit = simplify(substitute(e, self.alpha.control_values(a)))
            self._at[key] = hit
        return hit

    def post_image(self, cmd: Command, e: Expr) -> Expr:
        """``e[e_i/x]`` for command ``cmd`` (cached)."""
        key = (cmd.index, e)
        hit = self._post.get(key)
        if hit is None:
            hit = substitute(e, cmd.update_map())
            self._post[key] = hit
        return hit

    # -- helpers -----------------------------------------------------------------------
    def _new_atoms(self, e: Expr) -> list[Expr]:
        out: list[Expr] = []
        for x in atoms(e):
            if isinstance(x, Var) and isinstance(x.var_sort, BoolSort):
                continue  # a bool variable is control: never a predicate
            c = canonical_atom(x, self.order)
            if not isinstance(simplify(c), Const) and c not in out:
                out.append(c)
        return out

    def _unproved(self, a: AbstractState, g: Expr) -> bool:
        """True when ``α(a) ⇒ g`` is not proved (``g``: control values substituted and
        simplified)."""
        if isinstance(g, Const):
            return not g.value
        if self.prover is None:
            return True
        key = (a, g)
        hit = self._decided.get(key)
        if hit is None:
            # a Ctrl-C whose KeyboardInterrupt was swallowed (in a __del__ of Z3's) canceled
            # one call, which answered unknown: the search would go on without this poll
            interrupt.raise_if_since(self.signals)
            hit = not self.prover.implies(self.alpha.data_formula(a), g)
            self._decided[key] = hit
        return hit

    # -- the checks --------------------------------------------------------------------
    def enabled(self, a: AbstractState, cmd: Command) -> tuple[Expr, ...]:
        """New predicates from ``α(s) ⇒ ok_i ∧ g_i`` for an enabled command, and from every
        ``assert`` condition of the command that ``α(s)`` does not decide."""
        key = ("g", a, cmd.index)
        hit = self._cache.get(key)
        if hit is None:
            goal = self.at(a, conj([self._ok[cmd.index], cmd.guard]))
            found = list(self._new_atoms(goal)) if self._unproved(a, goal) else []
            for _, cond in cmd.asserts:  # α(s) must decide every assertion of the command
                c = self.at(a, cond)
                d = self.at(a, definedness(cond))
                if self._unproved(a, conj([d, c])) and self._unproved(a, conj([d, neg(c)])):
                    found += [x for x in self._new_atoms(c) if x not in found]
            hit = tuple(found)
            self._cache[key] = hit
        return hit

    def disabled(self, a: AbstractState, cmd: Command) -> tuple[Expr, ...]:
        """New predicates unless ``α(s) ⇒ ok_i ∧ ¬g_i`` (disabled) or ``α(s) ⇒ ¬ok_i`` (a
        model error) for a command without a successor."""
        key = ("d", a, cmd.index)
        hit = self._cache.get(key)
        if hit is None:
            ok = self.at(a, self._ok[cmd.index])
            off = conj([ok, neg(self.at(a, cmd.guard))])
            fails = neg(ok)
            if self._unproved(a, off) and self._unproved(a, fails):
                hit = tuple(self._new_atoms(off))
            else:
                hit = ()
            self._cache[key] = hit
        return hit

    def exactness(self, a: AbstractState, cmd: Command, a2: AbstractState) -> tuple[Expr, ...]:
        """New predicates from ``α(s) ⇒ α(s')[e_i/x]``: the atoms of every conjunct that is not
        provable on its own (Section 7)."""
        key = ("x", a, cmd.index, a2)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        alpha = self.alpha
        updates = cmd.update_map()
        post: list[Expr] = []
        for k, v in enumerate(alpha.control):
            rhs = updates.get(v.name)
            if rhs is None:
                continue  # unchanged control values agree by construction
            value: Expr = const(bool(a2[k])) if isinstance(v.sort, BoolSort) else const(a2[k])
            post.append(Op("==", (rhs, value)))
        post.extend(self.post_image(cmd, lit) for lit in alpha.literals(a2))
        found: list[Expr] = []
        for conjunct in post:
            goal = self.at(a, conjunct)
            if self._unproved(a, goal):
                for atom in self._new_atoms(goal):
                    if atom not in found:
                        found.append(atom)
        hit = tuple(found)
        self._cache[key] = hit
        return hit

    def label(self, a: AbstractState, prop: Property) -> tuple[Expr, ...]:
        """New predicates unless ``α(s)`` decides the property's bad condition."""
        key = ("l", a, prop.name)
        hit = self._cache.get(key)
        if hit is None:
            bad = self.at(a, violation_condition(prop.expr, prop.kind))
            if isinstance(bad, Const):
                hit = ()
            elif self._unproved(a, bad) and self._unproved(a, neg(bad)):
                hit = tuple(self._new_atoms(bad))
            else:
                hit = ()
            self._cache[key] = hit
        return hit
