"""A lost wakeup with a condition variable (thesis Table 3.1): ``waiter`` waits without
testing a predicate; when ``signaller`` notifies first, the notification is lost and the
waiter blocks forever (deadlock found). ``waiter_fixed`` tests a flag under the lock.

absmc check examples/python/lost_wakeup.py --entry run --component waiter,signaller
"""

import threading

cond = threading.Condition()
ready = []


def waiter():
    with cond:
        cond.wait()


def signaller():
    with cond:
        ready.append(True)
        cond.notify()


def waiter_fixed():
    with cond:
        while not ready:
            cond.wait()


def run():
    ready.clear()
    t = threading.Thread(target=waiter)
    s = threading.Thread(target=signaller)
    t.start()
    s.start()
    t.join()
    s.join()


def run_fixed():
    ready.clear()
    t = threading.Thread(target=waiter_fixed)
    s = threading.Thread(target=signaller)
    t.start()
    s.start()
    t.join()
    s.join()
