"""Dining philosophers (thesis Table 3.1): N philosophers, N forks (locks).

``dinner_ordered`` takes the lower-numbered fork first (no deadlock); ``dinner`` takes the
left fork first (deadlock: every philosopher holds one fork).
Check: absmc check examples/python/philosophers.py --entry dinner --component philosopher
"""

import threading

N = 3
forks = []
meals = []


def philosopher(i, first, second):
    with forks[first]:
        with forks[second]:
            meals[i] += 1


def dinner(n=N):
    forks.clear()
    meals.clear()
    for _ in range(n):
        forks.append(threading.Lock())
        meals.append(0)
    threads = []
    for i in range(n):
        t = threading.Thread(target=philosopher, args=(i, i, (i + 1) % n))
        threads.append(t)
        t.start()
    for t in threads:
        t.join()
    assert sum(meals) == n


def dinner_ordered(n=N):
    forks.clear()
    meals.clear()
    for _ in range(n):
        forks.append(threading.Lock())
        meals.append(0)
    threads = []
    for i in range(n):
        a, b = i, (i + 1) % n
        t = threading.Thread(target=philosopher, args=(i, min(a, b), max(a, b)))
        threads.append(t)
        t.start()
    for t in threads:
        t.join()
    assert sum(meals) == n
