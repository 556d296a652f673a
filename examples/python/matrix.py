"""Matrix multiplication (thesis Tables 2.1–2.2): the environment feeds matrix pairs (1,000 by
default, from a seeded generator) and checks each product against its own reference; the
component is the multiplication. ``main`` holds; ``main_bug`` uses ``multiply_bug``, whose
inner loop stops one column early (the assertion fails on the first pair it matters for).

absmc check examples/python/matrix.py --entry main --component multiply --store bitstate
"""

import random


def pair(k, size=2, seed=7):
    """Environment: the ``k``-th pair of ``size``×``size`` integer matrices (a function of
    ``k``: the environment is deterministic)."""
    rng = random.Random(seed * 100_003 + k)
    a = [[rng.randint(-3, 3) for _ in range(size)] for _ in range(size)]
    b = [[rng.randint(-3, 3) for _ in range(size)] for _ in range(size)]
    return a, b


def reference(a, b):
    """Environment: the product by the library's sum over a generator."""
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]


def multiply(a, b):
    n, m, p = len(a), len(b), len(b[0])
    c = []
    for i in range(n):
        row = []
        for j in range(p):
            s = 0
            for k in range(m):
                s += a[i][k] * b[k][j]
            row.append(s)
        c.append(row)
    return c


def multiply_bug(a, b):
    n, m, p = len(a), len(b), len(b[0])
    c = []
    for i in range(n):
        row = []
        for j in range(p):
            s = 0
            for k in range(m - 1):
                s += a[i][k] * b[k][j]
            row.append(s)
        c.append(row)
    return c


def main(count=1000):
    for k in range(count):
        a, b = pair(k)
        assert multiply(a, b) == reference(a, b)


def main_bug(count=1000):
    for k in range(count):
        a, b = pair(k)
        assert multiply_bug(a, b) == reference(a, b)
