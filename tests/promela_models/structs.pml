/* typedef, arrays of structs, unsigned, wrap-around, inline, for, select */
typedef Pt { byte x; short y[2] };
Pt p[2];
unsigned u : 3 = 6;
bit b;
int big = 2147483646;
inline bump(v, d) { v = v + d }
active proctype P() {
  byte j;
  select (j : 0 .. 1);
  for (j : 0 .. 1) { bump(p[j].x, 200); p[j].y[1] = -32768 + j }
  p[1].y[1]--;
  u++; u++; b = b + 3; big++;
  assert(big < 0 && u == 0 && b == 1)
}
