"""A System as Presburger sets and relations (islpy): states, initial states, one transition
relation per command (paper 002 Def. 2.1-2.2: post- and pre-image are exact).

Every variable is one integer dimension (bools as 0/1, finite ranges with their bounds as
constraints of the state space ``domain``), named ``v0, v1, ...`` in declaration order (so a
model's names never clash with isl's keywords); primed copies ``w0, w1, ...`` in relations.
Integer expressions are linear: ``+ - *`` (one side constant), ``/ %`` by a nonzero constant
(C's truncating semantics, as case splits on the sign), ``?:``; anything else raises
:class:`Unsupported` with the expression's location.

A command's relation is ``guard ∧ x' = e ∧ y' = y ∧ domain(target)``: an assignment outside a
finite range is a model error in the concrete semantics (the command does not execute), so it
is not a transition; :meth:`Encoding.model_errors` gives the states where it happens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import islpy as isl

from absmc.ir.expr import Const, Expr, Op, Var
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.span import ModelError, SourceSpan
from absmc.ir.steps import State
from absmc.ir.system import Command, System

__all__ = ["Encoding", "Unsupported"]

Cases = list[tuple[str, str]]  # (condition, linear term) alternatives of an integer expression


class Unsupported(ModelError):
    """An expression outside linear integer arithmetic (the symbolic method's theory)."""


_CMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "="}


class Encoding:
    """The Presburger encoding of ``system`` (see the module doc). ``names[i]`` is the isl
    dimension of variable ``i``."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.n = len(system.variables)
        self.names = [f"v{i}" for i in range(self.n)]
        self.primed = [f"w{i}" for i in range(self.n)]
        self._dim = {v.name: self.names[i] for i, v in enumerate(system.variables)}

    # -- sets ------------------------------------------------------------------------------
    def tuple_of(self, names: Sequence[str]) -> str:
        return "[" + ", ".join(names) + "]"

    def set_of(self, formula: str) -> isl.Set:
        """The set of states satisfying an isl formula over ``v0..``."""
        return isl.Set(f"{{ {self.tuple_of(self.names)} : {formula} }}")

    @cached_property
    def domain(self) -> isl.Set:
        """Every state: finite ranges and bools within their bounds."""
        return self.set_of(self._domain_formula(self.names))

    def _domain_formula(self, names: Sequence[str]) -> str:
        parts = ["true"]
        for v, d in zip(self.system.variables, names, strict=True):
            if isinstance(v.sort, RangeSort):
                parts.append(f"{v.sort.lo} <= {d} <= {v.sort.hi}")
            elif isinstance(v.sort, BoolSort):
                parts.append(f"0 <= {d} <= 1")
        return " and ".join(parts)

    def states(self, e: Expr) -> isl.Set:
        """The states where the bool expression ``e`` holds."""
        return self.set_of(self.boolean(e, self.names)).intersect(self.domain)

    def atom(self, e: Expr, over: bool) -> isl.Set:
        """The states of an atom (exact here; an abstraction approximates, see
        :class:`~absmc.engines.symbolic.abstract.PartialAbstraction`)."""
        return self.states(e)

    @property
    def exact(self) -> bool:
        """Whether sets over this encoding are concrete (no abstraction)."""
        return True

    def control(self) -> list[tuple[int, int, int]]:
        """The control dimensions ``(index, lo, hi)``: finite ranges and bools."""
        out = []
        for i, v in enumerate(self.system.variables):
            if isinstance(v.sort, RangeSort):
                out.append((i, v.sort.lo, v.sort.hi))
            elif isinstance(v.sort, BoolSort):
                out.append((i, 0, 1))
        return out

    def concretize(self, sset: isl.Set) -> isl.Set:
        """The concrete states a set over this encoding stands for (itself here)."""
        return sset

    def abstract_of(self, s: State) -> isl.Set:
        """The (abstract) singleton of a concrete state."""
        return self.point(s)

    def values_of(self, s: State) -> State:
        """The coordinates of a concrete state in this encoding's space (itself here)."""
        return s

    @cached_property
    def initial(self) -> isl.Set:
        """The initial states: ``init:`` constraint, declared values of the other variables."""
        sysm = self.system
        from absmc.kernel.model.initial import mentioned

        free = set(mentioned(sysm))
        parts = [
            f"{d} = {v.init}"
            for v, d in zip(sysm.variables, self.names, strict=True)
            if v.name not in free
        ]
        if sysm.init_constraint is not None:
            parts.append(self.boolean(sysm.init_constraint, self.names))
        return self.set_of(" and ".join(parts) or "true").intersect(self.domain)

    # -- relations -------------------------------------------------------------------------
    def relation(self, c: Command) -> isl.Map:
        """The transition relation of one command."""
        parts = self.relation_formula(c, self.names, self.primed)
        src = self.tuple_of(self.names)
        dst = self.tuple_of(self.primed)
        return isl.Map(f"{{ {src} -> {dst} : {' and '.join(f'({p})' for p in parts)} }}")

    def relation_formula(self, c: Command, src: Sequence[str], dst: Sequence[str]) -> list[str]:
        """The conjuncts of command ``c``'s relation with the variables named ``src`` before
        and ``dst`` after the step: guard, updates, frame, both states in the domain."""
        upd = c.update_map()
        parts = [self.boolean(c.guard, src)]
        for v, d, w in zip(self.system.variables, src, dst, strict=True):
            e = upd.get(v.name)
            if e is None:
                parts.append(f"{w} = {d}")
            elif isinstance(v.sort, RangeSort) and v.sort.overflow == "wrap":
                # Promela's types: the value wraps around into lo..hi
                lo, size = v.sort.lo, v.sort.hi - v.sort.lo + 1
                parts.append(
                    " or ".join(
                        f"({c} and {w} = {lo} + (({t}) - {lo}) mod {size})"
                        for c, t in self.integer(e, src)
                    )
                )
            else:
                parts.append(self._eq(w, e, src))
        parts.append(self._domain_formula(dst))
        parts.append(self._domain_formula(src))
        return parts

    @cached_property
    def relations(self) -> list[isl.Map]:
        """One relation per command (``System.commands`` order)."""
        return [self.relation(c) for c in self.system.commands]

    @cached_property
    def transition(self) -> isl.Map:
        """The union of the commands' relations."""
        out = isl.Map.empty(self.relations[0].get_space())
        for r in self.relations:
            out = out.union(r)
        return out.coalesce()

    @cached_property
    def dead(self) -> isl.Set:
        """States without successor (deadlocks: GCL has no valid end states): no command is
        enabled with its targets in range (the domain of no relation, written as one formula
        so that an abstraction needs no concrete relation for it). Computed as the domain
        minus each command's enabled states in turn, coalesced after each: isl's negation of
        the whole disjunction (``not (e1 or ... or en)``) expands it first (chardrv4's 32
        commands: 292 s of CPU, against about 2 s this way)."""
        out = self.domain
        for e in self.enabled_sets:
            out = out.subtract(e).coalesce()
        return out

    @cached_property
    def enabled_sets(self) -> list[isl.Set]:
        """Each command's enabled states (:meth:`enabled`) as a set, ``System.commands``
        order."""
        return [self.set_of(self.enabled(c)) for c in self.system.commands]

    def dead_at(self, fixed: Mapping[int, int]) -> isl.Set:
        """The dead states (:attr:`dead`) where each dimension ``i`` of ``fixed`` has the value
        ``fixed[i]`` (a control location): the domain there minus each command's enabled
        states there, coalesced after each, commands disabled there skipped. The same set as
        ``dead`` intersected with the location, without ``dead``'s complement over every
        location (the four-plane AGNTC model's counter guards ``numCk == 0``: the whole
        ``dead`` took 258 s of CPU for two planes, its complements ``numCk != 0`` multiplied
        across the locations)."""
        out = self.domain
        for i, v in fixed.items():
            out = out.fix_val(isl.dim_type.set, i, v)
        for e in self.enabled_sets:
            if out.is_empty():
                break
            here = e.intersect(out)
            if not here.is_empty():
                out = out.subtract(here).coalesce()
        return out

    def enabled(self, c: Command) -> str:
        """An isl formula over ``v0..`` for the states where command ``c`` has a successor:
        its guard holds and every value it assigns to a (non-wrapping) range is in range."""
        parts = [self.boolean(c.guard, self.names)]
        for n, e in c.updates:
            sort = self.system.var(n).sort
            if isinstance(sort, RangeSort) and sort.overflow != "wrap":
                alts = " or ".join(
                    f"({cond} and {sort.lo} <= {t} <= {sort.hi})"
                    for cond, t in self.integer(e, self.names)
                )
                parts.append(alts)
        return " and ".join(f"({p})" for p in parts)

    @cached_property
    def total(self) -> isl.Map:
        """The transition relation with a self-loop on every dead state (the CTL convention
        of :mod:`absmc.ir.ctl`)."""
        ident = isl.Map.identity(self.domain.get_space().map_from_set())
        return self.transition.union(ident.intersect_domain(self.dead)).coalesce()

    def model_errors(self) -> isl.Set:
        """States where some command is enabled but assigns a value outside a finite range."""
        out = isl.Set.empty(self.domain.get_space())
        for c in self.system.commands:
            ranged = [
                (n, e)
                for n, e in c.updates
                if isinstance(self.system.var(n).sort, RangeSort)
                and self.system.var(n).sort.overflow != "wrap"  # type: ignore[union-attr]
            ]
            for n, e in ranged:
                sort = self.system.var(n).sort
                assert isinstance(sort, RangeSort)
                alts = " or ".join(
                    f"({cond} and ({t} < {sort.lo} or {t} > {sort.hi}))"
                    for cond, t in self.integer(e, self.names)
                )
                guard = self.boolean(c.guard, self.names)
                out = out.union(self.set_of(f"({guard}) and ({alts})").intersect(self.domain))
        return out.coalesce()

    # -- points ----------------------------------------------------------------------------
    def point(self, s: State) -> isl.Set:
        """The singleton set of a concrete state."""
        return isl.Set("{ [" + ", ".join(str(x) for x in s) + "] }")

    def contains(self, sset: isl.Set, s: State) -> bool:
        """Whether the concrete state ``s`` lies in ``sset`` (its abstraction, for an
        abstract encoding)."""
        return bool(self.abstract_of(s).is_subset(sset))

    def sample(self, sset: isl.Set) -> State | None:
        """Some concrete state of ``sset`` (``None`` when empty)."""
        if sset.is_empty():
            return None
        pt = sset.sample_point()
        return tuple(
            int(pt.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(self.n)
        )

    # -- expressions -----------------------------------------------------------------------
    def _eq(self, w: str, e: Expr, names: Sequence[str]) -> str:
        if e.is_bool:
            b = self.boolean(e, names)
            return f"(({b}) and {w} = 1) or (not ({b}) and {w} = 0)"
        return " or ".join(f"({c} and {w} = {t})" for c, t in self.integer(e, names))

    def boolean(self, e: Expr, names: Sequence[str]) -> str:
        """An isl formula for the bool expression ``e`` (variables as ``names``)."""
        dim = dict(zip((v.name for v in self.system.variables), names, strict=True))
        return _Conv(dim, self.system.file).boolean(e)

    def integer(self, e: Expr, names: Sequence[str]) -> Cases:
        """The integer expression ``e`` as ``(condition, linear term)`` alternatives."""
        dim = dict(zip((v.name for v in self.system.variables), names, strict=True))
        return _Conv(dim, self.system.file).integer(e)


@dataclass
class _Conv:
    dim: dict[str, str]
    file: str

    def fail(self, e: Expr, what: str) -> Unsupported:
        return Unsupported(
            f"--method symbolic handles linear integer arithmetic only: {what}",
            e.span or SourceSpan(self.file or "<model>", 1, 1),
        )

    def boolean(self, e: Expr) -> str:
        if isinstance(e, Const):
            return "true" if e.value else "false"
        if isinstance(e, Var):
            return f"{self.dim[e.name]} = 1"
        assert isinstance(e, Op)
        o = str(e.op)
        a = e.args
        if o == "&&":
            return "(" + " and ".join(f"({self.boolean(x)})" for x in a) + ")"
        if o == "||":
            return "(" + " or ".join(f"({self.boolean(x)})" for x in a) + ")"
        if o == "!":
            return f"not ({self.boolean(a[0])})"
        if o == "=>":
            return f"(not ({self.boolean(a[0])}) or ({self.boolean(a[1])}))"
        if o == "ite":
            c, x, y = (self.boolean(z) for z in a)
            return f"((({c}) and ({x})) or (not ({c}) and ({y})))"
        if o in ("==", "!=") and a[0].is_bool:
            x, y = self.boolean(a[0]), self.boolean(a[1])
            same = f"((({x}) and ({y})) or (not ({x}) and not ({y})))"
            return same if o == "==" else f"not {same}"
        if o in _CMP or o == "!=":
            alts = []
            for c1, t1 in self.integer(a[0]):
                for c2, t2 in self.integer(a[1]):
                    rel = f"({t1} < {t2} or {t1} > {t2})" if o == "!=" else f"{t1} {_CMP[o]} {t2}"
                    alts.append(f"({c1} and {c2} and {rel})")
            return "(" + " or ".join(alts) + ")"
        raise self.fail(e, f"operator '{o}'")

    def integer(self, e: Expr) -> Cases:
        if isinstance(e, Const):
            return [("true", f"({e.value})")]
        if isinstance(e, Var):
            return [("true", self.dim[e.name])]
        assert isinstance(e, Op)
        o = str(e.op)
        a = e.args
        if o == "neg":
            return [(c, f"(-{t})") for c, t in self.integer(a[0])]
        if o in ("+", "-"):
            out = self.integer(a[0])
            for x in a[1:]:
                out = [
                    (_and(c1, c2), f"({t1} {o} {t2})")
                    for c1, t1 in out
                    for c2, t2 in self.integer(x)
                ]
            return out
        if o == "*":
            consts = [x for x in a if isinstance(x, Const)]
            rest = [x for x in a if not isinstance(x, Const)]
            if len(rest) > 1:
                raise self.fail(e, "a product of two variables")
            k = 1
            for x in consts:
                assert isinstance(x, Const)
                k *= x.value
            if not rest:
                return [("true", f"({k})")]
            return [(c, f"({k} * {t})") for c, t in self.integer(rest[0])]
        if o in ("/", "%"):
            d = a[1]
            if not isinstance(d, Const) or d.value == 0:
                raise self.fail(e, f"'{o}' by a nonzero constant only")
            k = abs(d.value)
            div: Cases = []
            for c, t in self.integer(a[0]):
                # C: truncation toward zero; q = floor(t/k) for t >= 0, -floor(-t/k) below
                qpos, qneg = f"floor(({t})/{k})", f"(-floor((-{t})/{k}))"
                sign = "" if d.value > 0 else "-"
                for cond, q in ((f"{t} >= 0", qpos), (f"{t} < 0", qneg)):
                    quot = f"({sign}{q})"
                    term = quot if o == "/" else f"({t} - {d.value} * {quot})"
                    div.append((_and(c, cond), term))
            return div
        if o == "ite":
            cond = self.boolean(a[0])
            alts = [(_and(cond, c), t) for c, t in self.integer(a[1])]
            alts += [(_and(f"not ({cond})", c), t) for c, t in self.integer(a[2])]
            return alts
        raise self.fail(e, f"operator '{o}'")


def _and(a: str, b: str) -> str:
    if a == "true":
        return b
    if b == "true":
        return a
    return f"({a}) and ({b})"
