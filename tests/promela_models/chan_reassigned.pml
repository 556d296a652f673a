/* global channels declared with initialisers and assigned later (as in SPIN's
   Examples/LTL/mobile2.pml, which swaps two of them): the names are variables holding
   channel ids */
chan a = [1] of { byte };
chan b = [0] of { byte };
chan hand = [0] of { chan };
byte n;

active proctype Owner() {
  chan t;
  do
  :: n < 2 -> t = a; a = b; b = t
  :: n < 2 -> hand!a
  :: n < 2 -> hand?b
  :: n >= 2 -> break
  od;
  assert(a != b)
}

active proctype Writer() {
  chan c;
  do
  :: n < 2 -> hand?c -> c!1
  :: n < 2 -> hand!b
  :: n >= 2 -> break
  od
}

active proctype Reader() {
  byte v;
  do
  :: a?v -> n++
  :: b?v -> n = n + v
  :: n >= 2 -> break
  od
}
