"""An unlocked ``balance += amount`` race (thesis Table 3.1): two threads deposit into one
account. At statement granularity each ``+=`` is one step (as the GIL makes it look), so the
final balance is right; ``--granularity access`` splits the read from the write and finds
the lost update. ``deposit_locked`` holds a lock and is correct at both granularities.

absmc check examples/python/bank.py --entry run --component Account --granularity access
"""

import threading


class Account:
    def __init__(self):
        self.balance = 0
        self.lock = threading.Lock()

    def deposit(self, amount):
        self.balance += amount

    def deposit_locked(self, amount):
        with self.lock:
            self.balance += amount


def run():
    acct = Account()
    t1 = threading.Thread(target=acct.deposit, args=(10,))
    t2 = threading.Thread(target=acct.deposit, args=(20,))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    assert acct.balance == 30, acct.balance


def run_locked():
    acct = Account()
    t1 = threading.Thread(target=acct.deposit_locked, args=(10,))
    t2 = threading.Thread(target=acct.deposit_locked, args=(20,))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    assert acct.balance == 30, acct.balance
