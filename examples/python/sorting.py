"""Sorting (thesis Table 2.3): a program with several sorts; the component is the selection
sort, the other sorts and the input generator are the environment. After each call the
program asserts that every value is at most the one after it. ``main_bug`` uses
``selection_sort_bug`` (its inner loop misses the last element).

absmc check examples/python/sorting.py --entry main --component selection_sort --store bitstate
"""

import random


def make_input(k, length=5, seed=3):
    """Environment: the ``k``-th input list (a function of ``k``)."""
    rng = random.Random(seed * 100_003 + k)
    return [rng.randint(0, 9) for _ in range(length)]


def insertion_sort(xs):
    out = list(xs)
    for i in range(1, len(out)):
        v = out[i]
        j = i - 1
        while j >= 0 and out[j] > v:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = v
    return out


def bubble_sort(xs):
    out = list(xs)
    for i in range(len(out)):
        for j in range(len(out) - 1 - i):
            if out[j] > out[j + 1]:
                out[j], out[j + 1] = out[j + 1], out[j]
    return out


def quick_sort(xs):
    if len(xs) <= 1:
        return list(xs)
    p = xs[0]
    return quick_sort([x for x in xs[1:] if x < p]) + [p] + quick_sort([x for x in xs[1:] if x >= p])


def selection_sort(xs):
    for i in range(len(xs)):
        m = i
        for j in range(i + 1, len(xs)):
            if xs[j] < xs[m]:
                m = j
        xs[i], xs[m] = xs[m], xs[i]


def selection_sort_bug(xs):
    for i in range(len(xs)):
        m = i
        for j in range(i + 1, len(xs) - 1):
            if xs[j] < xs[m]:
                m = j
        xs[i], xs[m] = xs[m], xs[i]


def main(count=200):
    for k in range(count):
        xs = make_input(k)
        ys = list(xs)
        selection_sort(ys)
        for k in range(len(ys) - 1):
            assert ys[k] <= ys[k + 1], ys
        assert ys == insertion_sort(xs) == bubble_sort(xs) == quick_sort(xs)


def main_bug(count=200):
    for k in range(count):
        xs = make_input(k)
        ys = list(xs)
        selection_sort_bug(ys)
        for k in range(len(ys) - 1):
            assert ys[k] <= ys[k + 1], ys
