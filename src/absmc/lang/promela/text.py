"""Promela source text of syntax-tree nodes (for trails: the statement a step executes)."""

from __future__ import annotations

from typing import Any

from absmc.lang.promela.ast import Node

_PREC = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7,
    ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}  # fmt: skip


def expr_text(n: Any, prec: int = 0) -> str:
    """An expression in Promela syntax."""
    if n is None:
        return ""
    k = n.kind
    if k == "const":
        return str(n.name) if n.name in ("true", "false", "skip") else str(n.val)
    if k == "var":
        idx, sub = n.args
        s = str(n.name or "")
        if idx is not None:
            s += f"[{expr_text(idx)}]"
        if sub is not None:
            s += "." + expr_text(sub)
        return s
    if k in _PREC:
        p = _PREC[k]
        s = f"{expr_text(n.args[0], p)} {k} {expr_text(n.args[1], p + 1)}"
        return f"({s})" if p < prec else s
    if k == "!":
        return "!" + expr_text(n.args[0], 11)
    if k == "~":
        return "~" + expr_text(n.args[0], 11)
    if k == "neg":
        return "-" + expr_text(n.args[0], 11)
    if k == "cond":
        return f"({expr_text(n.args[0])} -> {expr_text(n.args[1])} : {expr_text(n.args[2])})"
    if k == "run":
        prio = f" priority {n.val}" if n.val else ""
        return f"run {n.name}({', '.join(expr_text(a) for a in n.args)}){prio}"
    if k in ("len", "full", "nfull", "empty", "nempty", "enabled", "pc_value", "get_priority"):
        return f"{k}({expr_text(n.args[0])})"
    if k == "poll":
        op = "??" if n.val else "?"
        return f"{expr_text(n.args[0])}{op}[{', '.join(expr_text(a) for a in n.args[1:])}]"
    if k == "eval":
        return f"eval({expr_text(n.args[0])})"
    return str(k)


def node_text(n: Node | None) -> str:
    """A statement in Promela syntax."""
    if n is None:
        return ""
    k = n.kind
    if k == "c":
        return expr_text(n.args[0])
    if k == "asgn":
        lhs, rhs = n.args
        if n.val == 1 and rhs.kind in ("+", "-"):
            return f"{expr_text(lhs)}{'++' if rhs.kind == '+' else '--'}"
        return f"{expr_text(lhs)} = {expr_text(rhs)}"
    if k == "s":
        op = "!!" if n.val else "!"
        return f"{expr_text(n.args[0])}{op}{','.join(expr_text(a) for a in n.args[1:])}"
    if k == "r":
        op = "??" if n.val in (1, 3) else "?"
        args = ",".join(expr_text(a) for a in n.args[1:])
        return (
            f"{expr_text(n.args[0])}{op}<{args}>"
            if n.val >= 2
            else f"{expr_text(n.args[0])}{op}{args}"
        )
    if k == "assert":
        return f"assert({expr_text(n.args[0])})"
    if k == "print":
        return f"printf({n.name})"
    if k == "printm":
        return f"printm({expr_text(n.args[0])})"
    if k == "set_priority":
        return f"set_priority({expr_text(n.args[0])}, {expr_text(n.args[1])})"
    if k in ("else", "break"):
        return k
    if k == "goto":
        return "break" if n.val == 1 else f"goto {n.name}"
    if k == "@":
        return "-end-"
    if k in ("d_step", "atomic", "non_atomic"):
        return f"{k} {{...}}" if k != "non_atomic" else "{...}"
    return n.text or k


def stmt_text(e: Any) -> str:
    """The text of an element of :mod:`absmc.lang.promela.fsm`."""
    if e.kind == "d_step" and e.body is not None and e.body.frst is not None:
        inner: list[str] = []
        f = e.body.frst
        while f is not None:
            if f.kind not in (".", "goto", "break_tgt"):
                inner.append(stmt_text(f) if f.kind not in ("if", "do") else f.kind + " ...")
            if f is e.body.last:
                break
            f = f.nxt
        return "d_step { " + "; ".join(inner) + " }"
    return node_text(e.n)
