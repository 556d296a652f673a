"""Partial predicate abstraction (paper 002 §3.1, Def. 3.1, Eq. 1-4).

Given predicates ``p1..pk``, the *abstracted* variables are the unbounded integer variables
the predicates are about: those of a comparison's left-hand side (``a1 <= s`` abstracts
``a1`` and keeps ``s`` concrete, as the paper's ticket example keeps the dispenser and the
server concrete); a predicate that is not a comparison abstracts all its variables. Every other
variable stays concrete with its exact semantics. An
abstract state keeps the concrete dimensions and adds one 0/1 dimension ``b_i`` per predicate.

* ``α(S) = ∃A. S ∧ ⋀ b_i ⇔ p_i`` (Eq. 1) — :meth:`PartialAbstraction.alpha`, the image under
  the map ``Alpha`` from concrete to abstract states;
* ``γ(Ŝ)`` (Eq. 2) — the preimage under ``Alpha``;
* the abstract transition relation (Eq. 3): ``α(T) = Alpha⁻¹ ; T ; Alpha`` (the same concrete
  pair on both sides: the existential abstraction of Def. 2.6), which implies the
  consistency constraint of §3.1: a predicate none of whose variables the command assigns
  keeps its value (``b_i' = b_i``);
* atoms of properties: over-approximated by ``α(atom)``, under-approximated by the complement
  of ``α(¬atom)`` (the polarity decides which, as for the fixpoints).

The object has the interface :class:`~absmc.engines.symbolic.fixpoint.Fixpoints` needs (a
domain, initial states, the relations, control dimensions, atoms), so every fixpoint and the
widening run on the abstract system unchanged (§3.2, Theorem 3.1).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import islpy as isl

from absmc.engines.symbolic.coalesce import coalesce_chunked
from absmc.engines.symbolic.encode import Encoding
from absmc.engines.symbolic.liveness import ControlSpace, dead_locations
from absmc.ir.evaluate import EvalError, env_of, evaluate
from absmc.ir.expr import Expr, free_vars, neg
from absmc.ir.sorts import BoolSort, RangeSort
from absmc.ir.steps import State
from absmc.ir.system import System

__all__ = ["PartialAbstraction"]

_IN, _OUT, _SET = isl.dim_type.in_, isl.dim_type.out, isl.dim_type.set


class PartialAbstraction:
    """The partially predicate-abstracted system of ``enc``'s System w.r.t. ``predicates``."""

    def __init__(
        self,
        enc: Encoding,
        predicates: tuple[Expr, ...],
        observed: set[str] | None = None,
    ) -> None:
        self.enc = enc
        self.system = enc.system
        self.predicates = predicates
        self.abstracted = self.abstracted_of(enc.system, predicates)
        #: ``None``: no bit is collapsed; else the variables the properties read (live
        #: everywhere, see :attr:`collapsed`)
        self.observed = observed
        self.kept = [i for i in range(enc.n) if i not in self.abstracted]
        k = len(predicates)
        self.anames = [f"u{i}" for i in self.kept] + [f"b{j}" for j in range(k)]
        self.n = len(self.anames)
        self._points: dict[State, isl.Set] = {}

    @staticmethod
    def abstracted_of(system: System, predicates: tuple[Expr, ...]) -> list[int]:
        """The indices of the variables ``predicates`` abstract (see the module doc)."""
        mentioned = set().union(*(_subject(p) for p in predicates)) if predicates else set()
        return [
            i for i, v in enumerate(system.variables) if v.name in mentioned and not v.is_control
        ]

    # -- spaces ----------------------------------------------------------------------------
    def _tuple(self, names: list[str]) -> str:
        return "[" + ", ".join(names) + "]"

    @cached_property
    def alpha_map(self) -> isl.Map:
        """``Alpha``: concrete state -> its abstract state (a collapsed bit is 0 at the
        locations where it is collapsed, :attr:`collapsed`)."""
        enc = self.enc
        if not self.collapsed:
            parts = [f"u{i} = {enc.names[i]}" for i in self.kept]
            for j, p in enumerate(self.predicates):
                b = enc.boolean(p, enc.names)
                parts.append(_bit(f"b{j}", b))
            src = self._tuple(enc.names)
            dst = self._tuple(self.anames)
            body = " and ".join(f"({x})" for x in parts) or "true"
            return isl.Map(f"{{ {src} -> {dst} : {body} }}").intersect_domain(enc.domain)
        src = self._tuple(enc.names)
        kept = [f"u{i}" for i in self.kept]
        out = isl.Map(
            f"{{ {src} -> {self._tuple(kept)} : "
            + (" and ".join(f"u{i} = {enc.names[i]}" for i in self.kept) or "true")
            + " }"
        )
        for j, p in enumerate(self.predicates):
            one = isl.Map(f"{{ {src} -> [b{j}] : {_bit(f'b{j}', enc.boolean(p, enc.names))} }}")
            dead = self.collapsed.get(j)
            if dead is not None:
                space, where = dead
                zero = isl.Map(f"{{ {src} -> [b{j}] : b{j} = 0 }}")
                live = space.lift(space.universe.subtract(where))
                one = one.intersect_domain(live).union(zero.intersect_domain(space.lift(where)))
            out = out.flat_range_product(one)
        # not coalesced: the product of the bits' cases is already minimal (airportSM-tic4's
        # four collapsed bits: 256 disjuncts, which coalescing kept, for 3.6 s of CPU)
        return out.intersect_domain(enc.domain)

    def alpha(self, s: isl.Set) -> isl.Set:
        """α of a concrete set (Eq. 1)."""
        return s.apply(self.alpha_map).coalesce()

    def concretize(self, s: isl.Set) -> isl.Set:
        """γ of an abstract set (Eq. 2)."""
        return s.apply(self.alpha_map.reverse()).coalesce()

    # -- the interface of Encoding used by the fixpoints ----------------------------------
    @property
    def exact(self) -> bool:
        return not self.predicates

    @cached_property
    def domain(self) -> isl.Set:
        """α of the concrete domain. Without collapsed bits it is the kept variables' bounds
        with :attr:`consistent` (the domain bounds only finite ranges and bools, which are
        kept, so the abstracted variables range freely): the same set as ``α(domain)``
        without the image of the domain through the ``2^k``-case ``Alpha`` (airportSM-bk4's
        sixteen bakery atoms: 80 s of CPU for that image, 1.4 s this way). Coalesced up to
        64 disjuncts (beyond, the composite sets coalesce it location by location)."""
        if self.collapsed:
            return self.alpha(self.enc.domain)
        d = self.enc.domain
        for i in reversed(self.abstracted):
            d = d.project_out(_SET, i, 1)
        nk, k = len(self.kept), len(self.predicates)
        d = d.insert_dims(_SET, nk, k)
        ctx = d.get_ctx()
        for j in range(k):
            d = d.lower_bound_val(_SET, nk + j, isl.Val.int_from_si(ctx, 0))
            d = d.upper_bound_val(_SET, nk + j, isl.Val.int_from_si(ctx, 1))
        out = d.intersect(self.consistent)
        return out.coalesce() if out.n_basic_set() <= 64 else out

    @cached_property
    def initial(self) -> isl.Set:
        return self.alpha(self.enc.initial)

    def atom(self, e: Expr, over: bool) -> isl.Set:
        if over:
            return self.alpha(self.enc.states(e))
        return self.domain.subtract(self.alpha(self.enc.states(neg(e)))).coalesce()

    def states(self, e: Expr) -> isl.Set:
        return self.atom(e, True)

    def control(self) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        for pos, i in enumerate(self.kept):
            v = self.system.variables[i]
            if isinstance(v.sort, RangeSort):
                out.append((pos, v.sort.lo, v.sort.hi))
            elif isinstance(v.sort, BoolSort):
                out.append((pos, 0, 1))
        out += [(len(self.kept) + j, 0, 1) for j in range(len(self.predicates))]
        return out

    @cached_property
    def definitions(self) -> list[isl.Set]:
        """Per predicate ``j``, the set ``b_j ⇔ p_j`` over the concrete dimensions followed by
        the ``k`` bit dimensions (one set each, built once)."""
        enc = self.enc
        k = len(self.predicates)
        space = self._tuple(enc.names + [f"b{j}" for j in range(k)])
        return [
            isl.Set(f"{{ {space} : {_bit(f'b{j}', enc.boolean(p, enc.names))} }}")
            for j, p in enumerate(self.predicates)
        ]

    @cached_property
    def collapsed(self) -> dict[int, tuple[ControlSpace, isl.Set]]:
        """The collapsed predicate bits: predicate ``j`` -> the control locations (a
        non-empty set of the :class:`~absmc.engines.symbolic.liveness.ControlSpace` given
        with it) where each variable it abstracts is dead
        (:func:`~absmc.engines.symbolic.liveness.dead_locations`, with the variables in
        :attr:`observed` live everywhere); there ``α`` gives the bit the value 0 whatever the
        predicate's truth, so the bit does not split those locations in two. Sound for any
        choice of locations: ``α`` stays a function from concrete to abstract states and the
        relation is still its existential abstraction (Def. 2.6); liveness only makes it
        lose nothing, since a dead variable is assigned, and its bit defined again, before
        it is read. Empty when :attr:`observed` is ``None``."""
        if self.observed is None or not self.predicates:
            return {}
        ours = {self.system.variables[i].name: i for i in self.abstracted}
        out: dict[int, tuple[ControlSpace, isl.Set]] = {}
        for j, p in enumerate(self.predicates):
            mine = [ours[x] for x in sorted(set(free_vars(p)) & ours.keys())]
            got = dead_locations(self.enc, mine, self.observed) if mine else None
            if got is not None:
                out[j] = got
        return out

    @cached_property
    def _gates(self) -> dict[int, isl.Set]:
        """Per collapsed predicate ``j``, over the concrete dimensions and the ``k`` bits:
        the definition ``b_j = α(x)_j`` (0 at the dead locations, ``b_j ⇔ p_j`` elsewhere)."""
        k = len(self.predicates)
        out = {}
        for j, (space, where) in self.collapsed.items():
            d = self.definitions[j]
            ctx = d.get_ctx()
            lifted = space.lift(where, k)
            zero = lifted.fix_val(_SET, self.enc.n + j, isl.Val.int_from_si(ctx, 0))
            # the live locations lifted, not the complement of the lifted dead ones (which
            # also holds every state outside the domain: many more disjuncts)
            live = space.lift(space.universe.subtract(where), k)
            out[j] = d.intersect(live).union(zero).coalesce()
        return out

    def _keeps(self, ci: int, j: int) -> bool:
        """Whether command ``ci`` never moves between a location where bit ``j`` is collapsed
        and one where it is not (so a framed bit stays framed)."""
        space, where = self.collapsed[j]
        rest = space.universe.subtract(where)
        f = space.relation(self.enc.relations[ci])
        return bool(
            f.intersect_domain(where).range().is_subset(where)
            and f.intersect_domain(rest).range().is_subset(rest)
        )

    @cached_property
    def unconstraining(self) -> set[int]:
        """The predicates ``j`` whose definition says nothing once the abstracted variables
        are projected out (``∃ abstracted. b_j ⇔ p_j`` holds for every value of the kept
        variables and every 0/1 value of ``b_j``: ``w1 <= ts`` with ``w1`` abstracted) and
        whose abstracted variables occur in no other predicate. For a command that mentions
        none of such a predicate's variables, the definition can be left out of
        :meth:`relation` (the projection would make it true anyway): the bit is only
        framed."""
        enc = self.enc
        names = [set(free_vars(p)) for p in self.predicates]
        ours = {self.system.variables[i].name: i for i in self.abstracted}
        out = set()
        for j, d in enumerate(self.definitions):
            mine = names[j] & ours.keys()
            if not mine or any(mine & names[i] for i in range(len(names)) if i != j):
                continue
            q = d
            for i in sorted((ours[x] for x in mine), reverse=True):
                q = q.project_out(_SET, i, 1)
            pos = len(enc.names) - len(mine) + j  # b_j after the projection
            zero, one = (isl.Val.int_from_si(q.get_ctx(), v) for v in (0, 1))
            bit = isl.Set.universe(q.get_space()).lower_bound_val(_SET, pos, zero)
            if q.is_equal(bit.upper_bound_val(_SET, pos, one)):
                out.add(j)
        return out

    def relation(
        self, ci: int, tick: Callable[[], None] | None = None, coalesce: bool = True
    ) -> isl.Map:
        """The abstract relation of command ``ci`` (Eq. 3): ``Alpha⁻¹ ; T ; Alpha``, the pairs
        ``(α(x), α(x'))`` of the command's concrete pairs ``(x, x')``. Built on the concrete
        relation ``T`` (paper 002 §3.1): ``k`` bit dimensions added on both sides, each
        source bit constrained by its predicate's definition on the source; a target bit by
        the definition on the target only when the command assigns a variable of its
        predicate, else equated with its source bit (the §3.1 consistency constraint
        ``b_j' = b_j``, written out instead of derived); then the abstracted dimensions
        projected out on both sides. The same map as composing ``T`` with the
        ``2^k``-disjunct ``Alpha`` on both sides, without building that product; coalesced in
        chunks (:func:`~absmc.engines.symbolic.coalesce.coalesce_chunked`) unless not
        ``coalesce`` (the BDD sets split it by basic map anyway). ``tick`` is
        called between isl operations (it may raise to stop: the time limit)."""
        c = self.system.commands[ci]
        written = {n for n, _ in c.updates}
        mentioned = set(free_vars(c.guard)) | written
        for _, e in c.updates:
            mentioned |= set(free_vars(e))
        free = self.unconstraining
        n, k = self.enc.n, len(self.predicates)
        if self.frames(ci):
            return self._framing(ci, tick)
        rel = self.enc.relations[ci].add_dims(_IN, k).add_dims(_OUT, k)
        gates = self._gates
        for j, (p, d) in enumerate(zip(self.predicates, self.definitions, strict=True)):
            if j in gates:
                gate = gates[j]
                if set(free_vars(p)) & written or not self._keeps(ci, j):
                    rel = rel.intersect_domain(gate).intersect_range(gate)
                elif j in free and not set(free_vars(p)) & mentioned:
                    # only framed, as below: the bit is not tied to its dead locations
                    # either, which adds pairs between abstract states that are no state's
                    # image (the bit 1 where it is collapsed) and keeps the relation
                    # independent of those locations (airportSM-tic4: each plane's
                    # commands were split on every other plane's location and bit)
                    zero, one = (isl.Val.int_from_si(rel.get_ctx(), v) for v in (0, 1))
                    rel = rel.lower_bound_val(_IN, n + j, zero).upper_bound_val(_IN, n + j, one)
                    rel = rel.equate(_IN, n + j, _OUT, n + j)
                else:
                    rel = rel.intersect_domain(gate).equate(_IN, n + j, _OUT, n + j)
                continue
            if j in free and not set(free_vars(p)) & mentioned:
                # the definition vanishes in the projection (see unconstraining)
                zero, one = (isl.Val.int_from_si(rel.get_ctx(), v) for v in (0, 1))
                rel = rel.lower_bound_val(_IN, n + j, zero).upper_bound_val(_IN, n + j, one)
                rel = rel.equate(_IN, n + j, _OUT, n + j)
                continue
            rel = rel.intersect_domain(d)
            if set(free_vars(p)) & written:
                rel = rel.intersect_range(d)
            else:
                rel = rel.equate(_IN, n + j, _OUT, n + j)
        for i in reversed(self.abstracted):
            if tick is not None:
                tick()
            rel = rel.project_out(_IN, i, 1).project_out(_OUT, i, 1)
        return coalesce_chunked(rel, tick) if coalesce else rel

    def may_correlate(self, pos: int) -> bool:
        """Whether an abstract relation can constrain the abstract dimension ``pos`` beyond
        its command's guard and assignments: a predicate bit, or a kept variable that occurs
        in a predicate or in the locations where a bit is collapsed. Any other kept
        variable a command does not mention is framed (``x' = x`` within its bounds) by
        :meth:`relation`, as concretely."""
        if pos >= len(self.kept):
            return True
        return self.system.variables[self.kept[pos]].name in self._entangled

    @cached_property
    def _entangled(self) -> set[str]:
        out = set(self._predicate_names)
        for space, _ in self.collapsed.values():
            out |= {self.system.variables[i].name for i, _, _ in space.dims}
        return out

    @cached_property
    def _abstracted_names(self) -> set[str]:
        return {self.system.variables[i].name for i in self.abstracted}

    @cached_property
    def _predicate_names(self) -> set[str]:
        return set().union(*(free_vars(p) for p in self.predicates))

    @cached_property
    def consistent(self) -> isl.Set:
        """The bit valuations each value of the kept variables admits, over the abstract
        dimensions (kept variables, then the ``k`` bits): ``∃ abstracted. ⋀_j b_j ⇔ p_j``.
        Built over the variables the predicates mention only (the others are unconstrained
        and added back as free dimensions) as the cells of the predicates' arrangement: each
        predicate splits every non-empty cell in two (where it holds, where it does not), the
        bits a cell's path of splits, so no intermediate set holds the ``2^k`` combinations
        of the predicates' cases (airportSM-bk4's sixteen bakery atoms: 541 cells over four
        variables; the product over the whole space did not finish in 110 s of CPU)."""
        enc = self.enc
        k = len(self.predicates)
        used = [
            i
            for i, name in enumerate(enc.names)
            if i in self.abstracted or self.system.variables[i].name in self._predicate_names
        ]
        space = self._tuple([enc.names[i] for i in used])
        cells: list[tuple[tuple[int, ...], isl.Set]] = [((), isl.Set(f"{{ {space} }}"))]
        for p in self.predicates:
            f = enc.boolean(p, enc.names)
            yes = isl.Set(f"{{ {space} : {f} }}")
            no = isl.Set(f"{{ {space} : not ({f}) }}")
            nxt = []
            for bits, c in cells:
                for v, q in ((1, yes), (0, no)):
                    x = c.intersect(q)
                    if not x.is_empty():
                        nxt.append(((*bits, v), x))
            cells = nxt
        present = [i for i in used if i not in self.abstracted]
        # project the abstracted variables out of each cell; the bits become dimensions
        drop = [pos for pos, i in enumerate(used) if i in self.abstracted]
        ctx = isl.DEFAULT_CONTEXT
        out: isl.Set | None = None
        for bits, c in cells:
            for pos in reversed(drop):
                c = c.project_out(_SET, pos, 1)
            n = c.dim(_SET)
            c = c.insert_dims(_SET, n, k)
            for j, v in enumerate(bits):
                c = c.fix_val(_SET, n + j, isl.Val.int_from_si(ctx, v))
            out = c if out is None else out.union(c)
        assert out is not None
        # back to the abstract space: every kept variable, then the bits
        for pos, i in enumerate(self.kept):
            if i not in present:
                out = out.insert_dims(_SET, pos, 1)
        # over the bits alone the cells are distinct points, which the composite sets split
        # by location anyway: not coalesced (airportSM-bk4: isl took 25 s of CPU to coalesce
        # its 308 points into 25 disjuncts; neither a prime-cube cover, 164 boxes, helped)
        return out.coalesce() if present else out

    def frames(self, ci: int) -> bool:
        """Whether command ``ci`` is a *framing* command (:meth:`_framing`): it mentions no
        abstracted variable and assigns no variable of a predicate (and no bit is
        collapsed), so every bit keeps its value and the kept variables a predicate reads
        too: a state's image under it is consistent (:attr:`consistent`) when the state is."""
        c = self.system.commands[ci]
        written = {n for n, _ in c.updates}
        mentioned = set(free_vars(c.guard)) | written
        for _, e in c.updates:
            mentioned |= set(free_vars(e))
        return bool(
            self.predicates
            and not (self.collapsed or mentioned & self._abstracted_names)
            and not written & self._predicate_names
        )

    def _framing(self, ci: int, tick: Callable[[], None] | None) -> isl.Map:
        """:meth:`relation` for a command that mentions no abstracted variable and assigns
        no variable of a predicate (no collapsed bits): it frames the abstracted variables
        and every bit keeps its value, so ``Alpha⁻¹ ; T ; Alpha`` is ``T`` on the kept
        variables with the source's bits in :attr:`consistent` and ``b' = b`` — the same
        map, without projecting the abstracted dimensions out of the bits' definitions for
        each such command (airportSM-bk2: the runway's commands, half of them)."""
        nk, k = len(self.kept), len(self.predicates)
        rel = self.enc.relations[ci]
        for i in reversed(self.abstracted):
            rel = rel.project_out(_IN, i, 1).project_out(_OUT, i, 1)
        rel = rel.add_dims(_IN, k).add_dims(_OUT, k).intersect_domain(self.consistent)
        for j in range(k):
            rel = rel.equate(_IN, nk + j, _OUT, nk + j)
        return coalesce_chunked(rel, tick)

    @cached_property
    def transition(self) -> isl.Map:
        out = None
        for ci in range(len(self.system.commands)):
            r = self.relation(ci)
            out = r if out is None else out.union(r)
        assert out is not None
        return out.coalesce()

    @cached_property
    def dead(self) -> isl.Set:
        """Abstract states with a concrete state without successor (they get a self-loop:
        the totalized concrete relation is abstracted, so every concrete stutter step is
        simulated)."""
        return self.alpha(self.enc.dead)

    @cached_property
    def total(self) -> isl.Map:
        ident = isl.Map.identity(self.domain.get_space().map_from_set())
        return self.transition.union(ident.intersect_domain(self.dead)).coalesce()

    def abstract_of(self, s: State) -> isl.Set:
        """α of one concrete state: its kept values and its predicates' truth values
        (memoized: witness walks ask for the same states repeatedly)."""
        got = self._points.get(s)
        if got is None:
            got = self._points[s] = self._abstract_of(s)
        return got

    def _abstract_of(self, s: State) -> isl.Set:
        values = self.values_of(s)
        return isl.Set("{ [" + ", ".join(str(x) for x in values) + "] }")

    def values_of(self, s: State) -> State:
        """The abstract coordinates of a concrete state: its kept values, then its predicates'
        truth values (0/1)."""
        env = env_of(self.system, s)
        bits = []
        for j, p in enumerate(self.predicates):
            dead = self.collapsed.get(j)
            if dead is not None and dead[0].point(s).is_subset(dead[1]):
                bits.append(0)
                continue
            try:
                bits.append(1 if evaluate(p, env) else 0)
            except (EvalError, ZeroDivisionError):  # pragma: no cover - linear predicates
                bits.append(0)
        return tuple([s[i] for i in self.kept] + bits)

    def contains(self, sset: isl.Set, s: State) -> bool:
        return bool(self.abstract_of(s).is_subset(sset))


def _bit(b: str, formula: str) -> str:
    """An isl formula: the 0/1 dimension ``b`` is 1 exactly where ``formula`` holds."""
    return f"(({formula}) and {b} = 1) or (not ({formula}) and {b} = 0)"


def _subject(p: Expr) -> set[str]:
    """The variables a predicate abstracts: its left-hand side's, for a comparison."""
    from absmc.ir.expr import Op

    if isinstance(p, Op) and p.op in ("<", "<=", ">", ">=", "==", "!=") and free_vars(p.args[0]):
        return set(free_vars(p.args[0]))
    if isinstance(p, Op) and p.op == "!" and isinstance(p.args[0], Op):
        return _subject(p.args[0])
    return set(free_vars(p))
