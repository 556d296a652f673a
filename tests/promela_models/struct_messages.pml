/* structures as message fields (SPIN's Examples/for_example.pml): a structure field stands
   for its scalar fields, a whole structure (variable or field) in a send or receive for its fields */
typedef Pt { byte x; bit b[2] };
typedef Msg { Pt p; chan c; byte n };

chan q = [2] of { Msg };
chan r = [0] of { Pt, byte };

active proctype Sender() {
  Msg m;
  m.c = q;
  do
  :: m.n < 3 -> m.n++; m.p.x = m.n * 2; m.p.b[1] = m.n % 2; q!m
  :: q?[m] -> q?m; r!m.p, m.n
  :: m.n >= 3 -> break
  od
}

active proctype Receiver() {
  Pt t;
  byte k;
end:
  do
  :: r?t, k -> assert(t.x == 2 * k || k == 3)
  od
}
