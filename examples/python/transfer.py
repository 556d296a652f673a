"""Two-account transfers, each holding both accounts' locks, with an overdraft check that
returns early from inside the ``with`` blocks.

``transfer`` locks the source, then the destination: a transfer a->b and one b->a can
each hold one lock and wait for the other (a deadlock). ``transfer_ordered`` takes the
locks in the order of the account numbers and is proved.

absmc check examples/python/transfer.py --entry run --component Account,transfer,_run \
                                                            # violated: deadlock
absmc check examples/python/transfer.py --entry run_ordered \
    --component Account,transfer_ordered,_run                    # holds
"""

import threading
from dataclasses import dataclass, field


class InsufficientFunds(Exception):
    pass


@dataclass
class Account:
    number: int
    balance: int
    lock: threading.Lock = field(default_factory=lambda: threading.Lock())

    def withdraw(self, amount):
        if amount > self.balance:
            raise InsufficientFunds(self.number)
        self.balance -= amount


def transfer(src, dst, amount):
    with src.lock:
        with dst.lock:
            try:
                src.withdraw(amount)
            except InsufficientFunds:
                return False
            dst.balance += amount
            return True


def transfer_ordered(src, dst, amount):
    first, second = (src, dst) if src.number < dst.number else (dst, src)
    with first.lock, second.lock:
        try:
            src.withdraw(amount)
        except InsufficientFunds:
            return False
        dst.balance += amount
        return True


def _run(move):
    a = Account(1, 50)
    b = Account(2, 30)
    jobs = [(a, b, 40), (b, a, 70)]
    threads = [threading.Thread(target=move, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert a.balance + b.balance == 80, (a.balance, b.balance)
    assert a.balance >= 0 and b.balance >= 0


def run():
    _run(transfer)


def run_ordered():
    _run(transfer_ordered)
