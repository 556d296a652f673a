"""Structures in channel messages, flattened as SPIN flattens them.

SPIN lets a message field be a ``typedef`` structure (``chan x = [8] of { m }``): the field
stands for the structure's scalar fields in declaration order (arrays element by element,
nested structures recursively), and a whole structure variable as a send or receive argument
(``x!foo``, ``x?foo``) stands for its fields (``expand()`` in SPIN's flow.c; Examples/
for_example.pml and for_select_example.pml). :func:`flatten_struct_messages` rewrites a parsed
:class:`~absmc.lang.promela.ast.Model` in place so that the lowering sees only scalar fields.

Names are resolved by declaration: a proctype's parameters and locals, then the globals; in an
``inline`` body, the globals only (a local structure passed whole inside an inline keeps its
one argument, and the lowering reports the field count).
"""

from __future__ import annotations

from typing import Any

from absmc.lang.promela.assigned import nodes
from absmc.lang.promela.ast import ChanInit, Model, Node, VarDecl


def _field_types(m: Model, typ: str, size: int | None, seen: tuple[str, ...]) -> list[str]:
    """The scalar types a field of type ``typ`` (``size`` elements) stands for."""
    n = size or 1
    if typ not in m.typedefs or typ in seen:
        return [typ] * n
    out: list[str] = []
    for f in m.typedefs[typ].fields:
        out += _field_types(m, f.type, f.size, (*seen, typ))
    return out * n


def _leaf_refs(m: Model, typ: str, seen: tuple[str, ...]) -> list[list[tuple[str, int | None]]]:
    """Field paths to the scalar leaves of structure type ``typ``: each a list of (field,
    index or None)."""
    out: list[list[tuple[str, int | None]]] = []
    if typ in seen:
        return out
    for f in m.typedefs[typ].fields:
        idxs: list[int | None] = list(range(f.size)) if f.size else [None]
        for i in idxs:
            if f.type in m.typedefs:
                for sub in _leaf_refs(m, f.type, (*seen, typ)):
                    out.append([(f.name, i), *sub])
            else:
                out.append([(f.name, i)])
    return out


def _decls(body: Any) -> list[VarDecl]:
    out: list[VarDecl] = []
    for n in nodes(body, decls=True):
        if n.kind == "decl":
            out.extend(d for d in n.args if isinstance(d, VarDecl))
    return out


def _chain_type(m: Model, a: Node, types: dict[str, str]) -> str | None:
    """The type of variable reference ``a`` (``v``, ``v[i]``, ``v.f[j].g``...), or ``None``."""
    typ = types.get(a.name or "")
    sub = a.args[1] if len(a.args) > 1 else None
    while typ is not None and isinstance(sub, Node):
        td = m.typedefs.get(typ)
        fld = next((f for f in td.fields if f.name == sub.name), None) if td else None
        typ = fld.type if fld is not None else None
        sub = sub.args[1] if len(sub.args) > 1 else None
    return typ


def _with_tail(a: Node, tail: Node) -> Node:
    """Reference ``a`` with the field reference ``tail`` appended to its chain."""
    sub = a.args[1] if len(a.args) > 1 else None
    inner = _with_tail(sub, tail) if isinstance(sub, Node) else tail
    return Node("var", [a.args[0], inner], name=a.name, span=a.span)


def _expand(m: Model, a: Any, types: dict[str, str]) -> list[Any]:
    """Send/receive argument ``a``: the field references of a whole structure (a variable,
    an array element or a structure field), or ``[a]``."""
    if not (isinstance(a, Node) and a.kind == "var" and len(a.args) == 2):
        return [a]
    typ = _chain_type(m, a, types)
    if typ is None or typ not in m.typedefs:
        return [a]
    out: list[Any] = []
    for path in _leaf_refs(m, typ, ()):
        sub: Node | None = None
        for fname, idx in reversed(path):
            ix = Node("const", val=idx, span=a.span) if idx is not None else None
            sub = Node("var", [ix, sub], name=fname, span=a.span)
        assert sub is not None
        out.append(_with_tail(a, sub))
    return out


def _for_in_channel(n: Node, count: str) -> None:
    """``for (v in c) { body }`` with a structure ``v`` and a channel ``c``, rewritten in place
    as SPIN's flow.c ``for_index`` does: ``for (count : 0 .. len(c) - 1) { c?v; c!v; body }``
    (each message received and sent back, so the channel rotates once)."""
    v, c = n.args
    sp = n.span
    recv = Node("r", [c, v], span=sp, text=f"{c.name}?{v.name}")
    send = Node("s", [c, v], span=sp, text=f"{c.name}!{v.name}")
    last = Node("-", [Node("len", [c], span=sp), Node("const", val=1)], span=sp)
    n.kind = "for"
    n.args = [Node("var", [None, None], name=count, span=sp), Node("const", val=0), last]
    body = n.options[0] if n.options else []
    n.options = [[recv, send, *body]]


def _rewrite(m: Model, body: Any, types: dict[str, str]) -> list[VarDecl]:
    """Rewrite ``body`` in place; returns the loop counters of ``for (v in channel)`` loops,
    to be declared in the process."""
    counters: list[VarDecl] = []
    for n in nodes(body, decls=True):
        if n.kind in ("s", "r", "poll") and n.args:
            n.args = [n.args[0], *(x for a in n.args[1:] for x in _expand(m, a, types))]
        elif n.kind == "for_in" and len(n.args) == 2:
            v, c = n.args
            if types.get(v.name or "") in m.typedefs and types.get(c.name or "") == "chan":
                name = f"_f0r_t3mp{len(counters)}"
                counters.append(VarDecl(name, "byte", span=n.span))
                _for_in_channel(n, name)  # its receive and send are expanded next
    return counters


def flatten_struct_messages(m: Model) -> None:
    """Rewrite ``m`` in place: structure fields of channel declarations become their scalar
    types, whole structure variables in sends, receives and polls their field references."""
    if not m.typedefs:
        return
    inits: list[ChanInit] = []
    for d in m.globals:
        if isinstance(d.init, ChanInit):
            inits.append(d.init)
    for p in [*m.procs, *m.nevers]:
        inits += [d.init for d in _decls(p.body) if isinstance(d.init, ChanInit)]
    for i in m.inlines.values():
        inits += [d.init for d in _decls(i.body) if isinstance(d.init, ChanInit)]
    for ci in inits:
        ci.fields = [t for f in ci.fields for t in _field_types(m, f, None, ())]
    gtypes = {d.name: d.type for d in m.globals}
    for p in [*m.procs, *m.nevers]:
        types = dict(gtypes)
        types.update({d.name: d.type for d in [*p.params, *_decls(p.body)]})
        counters = _rewrite(m, p.body, types)
        if counters:
            p.body.insert(0, Node("decl", list(counters), span=counters[0].span))
    for i in m.inlines.values():
        _rewrite(m, i.body, gtypes)
