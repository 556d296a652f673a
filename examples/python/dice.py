"""Dice (PA+TP, thesis ch. 2.3): the component adds ``n`` throws of an environment die. The
die is nondeterministic (``env_choices={throw: [0, 1, 2, 3]}`` from the API; the checker
enumerates its results). Abstract matching on the branch guards alone (``i < n``,
``total != 7``) merges all throws and misses the seeded error of ``play_bug``; PA+TP adds the
weakest preconditions the prover could not decide (``total + d != 7``, ...) round after round
until it reaches it. ``play`` (the bound ``total <= 3 * n``) holds.

absmc check examples/python/dice.py --entry play_bug --component play_bug --store predicates
(from the command line the die is the concrete ``throw`` below: deterministic)
"""


def throw():
    """Environment: one throw (nondeterministic when checked with ``env_choices``)."""
    return 3


def play(n=3):
    i = 0
    total = 0
    while i < n:
        d = throw()
        total = total + d
        i = i + 1
    assert total <= 3 * n


def play_bug(n=3):
    i = 0
    total = 0
    while i < n:
        d = throw()
        total = total + d
        i = i + 1
    assert total != 7
