/* for (v in c) over a channel of structures (SPIN's Examples/for_select_example.pml): each
   message is received and sent back once, in order, with a byte counter (flow.c for_index) */
typedef M { byte a; bit b };

chan c = [3] of { M };

active proctype P() {
  M m, k;
  byte sum;
  do
  :: len(c) < 3 -> m.a = len(c) + 1; m.b = len(c) % 2; c!m
  :: len(c) > 1 -> break
  od;
  for (m in c) {
    sum = sum + m.a;
    for (k in c) { sum = sum + k.b }
  };
  c?k;
  assert(k.a == 1 && sum != 9)
}
