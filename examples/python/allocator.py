"""A small first-fit allocator (thesis Tables 2.4–2.5): the component keeps a free list of
(start, size) blocks in a heap of ``SIZE`` units; the environment draws requests with
``random.Random`` and keeps the allocated blocks in order with ``bisect``, checking that no two
allocated blocks overlap. ``Allocator.free_bug`` merges a freed block with its neighbour one
unit too far (found).

absmc check examples/python/allocator.py --entry main --component Allocator --store bitstate
"""

import bisect
import random

SIZE = 32


class Allocator:
    def __init__(self, size):
        self.free = [(0, size)]

    def alloc(self, n):
        for i in range(len(self.free)):
            start, size = self.free[i]
            if size >= n:
                if size == n:
                    del self.free[i]
                else:
                    self.free[i] = (start + n, size - n)
                return start
        return -1

    def free_block(self, start, n):
        i = 0
        while i < len(self.free) and self.free[i][0] < start:
            i += 1
        self.free.insert(i, (start, n))
        if i + 1 < len(self.free) and start + n == self.free[i + 1][0]:
            self.free[i] = (start, n + self.free[i + 1][1])
            del self.free[i + 1]
        if i > 0 and self.free[i - 1][0] + self.free[i - 1][1] == start:
            self.free[i - 1] = (self.free[i - 1][0], self.free[i - 1][1] + self.free[i][1])
            del self.free[i]

    def free_bug(self, start, n):
        i = 0
        while i < len(self.free) and self.free[i][0] < start:
            i += 1
        self.free.insert(i, (start, n))
        if i + 1 < len(self.free) and start + n == self.free[i + 1][0]:
            self.free[i] = (start, n + self.free[i + 1][1] + 1)
            del self.free[i + 1]


def overlaps(blocks, start, n):
    """Environment: does [start, start+n) overlap one of the sorted allocated blocks?"""
    k = bisect.bisect_left(blocks, (start, 0))
    if k < len(blocks) and blocks[k][0] < start + n:
        return True
    return k > 0 and blocks[k - 1][0] + blocks[k - 1][1] > start


def request(k):
    """Environment: the ``k``-th request, ``("free", r)`` (r picks an allocated block) or
    ``("alloc", n)`` (a function of ``k``)."""
    rng = random.Random(11 * 100_003 + k)
    if rng.random() < 0.45:
        return "free", rng.randrange(1000)
    return "alloc", rng.randint(1, 6)


def main(rounds=300):
    heap = Allocator(SIZE)
    blocks = []
    for k in range(rounds):
        kind, x = request(k)
        if kind == "free" and blocks:
            b = blocks.pop(x % len(blocks))
            heap.free_block(b[0], b[1])
        elif kind == "alloc":
            start = heap.alloc(x)
            if start >= 0:
                assert not overlaps(blocks, start, x), (start, x, blocks)
                assert start + x <= SIZE
                bisect.insort(blocks, (start, x))


def main_bug(rounds=300):
    heap = Allocator(SIZE)
    blocks = []
    for k in range(rounds):
        kind, x = request(k)
        if kind == "free" and blocks:
            b = blocks.pop(x % len(blocks))
            heap.free_bug(b[0], b[1])
        elif kind == "alloc":
            start = heap.alloc(x)
            if start >= 0:
                assert not overlaps(blocks, start, x), (start, x, blocks)
                assert start + x <= SIZE
                bisect.insort(blocks, (start, x))
