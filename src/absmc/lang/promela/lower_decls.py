"""Promela lowering, declarations: globals and their layouts, initial values, channels and their
message encoding (a part of :class:`absmc.lang.promela.lower.Lowerer`)."""

from __future__ import annotations

from absmc.ir.expr import Const, Expr
from absmc.ir.system import Variable
from absmc.lang.promela.assigned import written_names
from absmc.lang.promela.ast import ChanInit, Node, VarDecl
from absmc.lang.promela.lower_base import (
    MAX_STATE_VARIABLES,
    Chan,
    LowererBase,
    Path,
    _Ctx,
)
from absmc.lang.promela.simplify import mk
from absmc.lang.promela.types import (
    Layout,
    Leaf,
    int_of,
    sort_of,
    type_range,
)


class Declarations(LowererBase):
    """The lowering's declarations."""

    # -- declarations ---------------------------------------------------------------------
    def add_var(self, name: str, lo: int, hi: int, init: int) -> None:
        sort = sort_of(lo, hi)
        self.vars.append(Variable(name, sort, (init - lo) % (hi - lo + 1) + lo))
        self.var_sorts[name] = sort

    def layout(self, prefix: str, d: VarDecl) -> Layout:
        def one(name: str) -> Layout:
            if d.type in self.m.typedefs:
                td = self.m.typedefs[d.type]
                lay = Layout("struct", typ=d.type)
                for f in td.fields:
                    sub = self.layout(name + ".", f)
                    lay.fields[f.name] = sub
                return lay
            if d.type not in (
                "bit",
                "bool",
                "byte",
                "short",
                "int",
                "unsigned",
                "mtype",
                "chan",
                "pid",
            ):
                raise self.err(f"unknown type '{d.type}'", span=d.span)
            lo, hi = type_range(d.type, d.bits)
            self.leaf_count += 1
            if self.leaf_count > MAX_STATE_VARIABLES:
                raise self.err(
                    f"too many variables: '{d.name}' makes the state longer than "
                    f"{MAX_STATE_VARIABLES:,} variables",
                    span=d.span,
                )
            return Layout("scalar", typ=d.type, leaf=Leaf(name, d.type, lo, hi))

        base = prefix + d.name
        if d.size is None:
            return one(base)
        return Layout("array", typ=d.type, elems=[one(f"{base}[{i}]") for i in range(d.size)])

    def global_decls(self) -> None:
        init_env: dict[str, Expr] = {}
        written = written_names(self.m)
        for d in self.m.globals:
            if d.name in self.globals:
                raise self.err(f"variable '{d.name}' is declared twice", span=d.span)
            lay = self.layout("", d)
            self.globals[d.name] = lay
            leaves = lay.leaves()
            if isinstance(d.init, ChanInit):
                if d.type != "chan":
                    raise self.err(f"'{d.name}' is not a chan", span=d.span)
                for lf in leaves:
                    c = self.new_chan(lf.name, d.init)
                    self.chan_of_var[lf.name] = [c.cid]
                    if d.name in written:  # a variable holding the id (SPIN's mobile2)
                        self.initial[lf.name] = c.cid
                        self.add_var(lf.name, lf.lo, lf.hi, c.cid)
                continue
            if d.hidden:
                self.hidden.update(lf.name for lf in leaves)
            values = self.init_values(d, leaves, init_env)
            for lf, v in zip(leaves, values, strict=True):
                init_env[lf.name] = Const(v)
                self.initial[lf.name] = v
                if not d.hidden:
                    self.add_var(lf.name, lf.lo, lf.hi, v)

    def init_values(self, d: VarDecl, leaves: list[Leaf], env: dict[str, Expr]) -> list[int]:
        if d.init is None:
            return [0] * len(leaves)
        if isinstance(d.init, list):
            vals = [self.const_eval(x, env) for x in d.init]
            return (vals + [0] * len(leaves))[: len(leaves)]
        v = self.const_eval(d.init, env)
        return [v] * len(leaves)

    def const_eval(self, n: Node, env: dict[str, Expr]) -> int:
        p = Path(dict(env), [])
        e = self.ev(n, p, _Ctx(None, None), [])
        e = int_of(e)
        if not isinstance(e, Const):
            raise self.err("initial values must be constant", n)
        return e.value

    def new_chan(self, name: str, ci: ChanInit) -> Chan:
        cid = len(self.chans) + 1
        ranges = []
        for f in ci.fields:
            if f in self.m.typedefs:
                raise self.err("structures in channel messages are not supported", span=ci.span)
            if f == "unsigned":
                raise self.err("unsigned cannot be a message field type", span=ci.span)
            ranges.append(type_range(f))
        cap = max(ci.capacity, 1)
        self.leaf_count += cap * max(1, len(ci.fields))
        if self.leaf_count > MAX_STATE_VARIABLES:
            raise self.err(
                f"channel capacity {ci.capacity} makes the state longer than "
                f"{MAX_STATE_VARIABLES:,} variables",
                span=ci.span,
            )
        len_var = f"{name}#len"
        slots = [[f"{name}#{k}.{j}" for j in range(len(ci.fields))] for k in range(cap)]
        c = Chan(cid, name, ci.capacity, list(ci.fields), len_var, slots, ranges)
        self.chans.append(c)
        if ci.capacity >= 2:
            # one variable for all messages: narrower states hash and copy faster
            off = 0
            for lo, hi in ranges:
                c.offsets.append(off)
                c.bits.append(max(1, (hi - lo).bit_length()))
                off += c.bits[-1]
            c.width = off
            c.data_var = f"{name}#data"
            self.add_var(len_var, 0, ci.capacity, 0)
            self.add_var(c.data_var, 0, 2 ** (off * ci.capacity) - 1, 0)
        elif ci.capacity > 0:
            self.add_var(len_var, 0, ci.capacity, 0)
            for k in range(cap):
                for j, (lo, hi) in enumerate(ranges):
                    self.add_var(slots[k][j], lo, hi, 0)
        return c

    def data(self, c: Chan, p: Path) -> Expr:
        return p.val(c.data_var, self.var_sorts[c.data_var])

    def encode(self, c: Chan, vals: list[Expr]) -> Expr:
        """A message as the bits of one slot of a packed channel."""
        out: Expr = Const(0)
        for j, v in enumerate(vals):
            lo = c.field_ranges[j][0]
            part = mk("-", v, Const(lo)) if lo else v
            out = mk("|", out, mk("<<", part, Const(c.offsets[j])) if c.offsets[j] else part)
        return out

    def low_bits(self, e: Expr, n: int) -> Expr:
        return mk("&", e, Const((1 << n) - 1)) if n > 0 else Const(0)
