/* Computed array indices: reads after writes inside one d_step, arrays of structures, nested
   arrays, a channel array indexed by a variable (direct indexing, never a case split). */
typedef Cell { byte v; byte w[3] }
byte A[8];
Cell C[4];
chan q[3] = [0] of { byte };
byte i, j, k;

active proctype Writer() {
  do
  :: k < 4 -> d_step { A[i] = A[j] + 3; A[j] = A[i] * 2; i = (A[i] + j) % 8; j = (j + 3) % 8; k++ }
  :: k < 4 -> d_step { C[i % 4].v = A[j]; C[j % 4].w[i % 3] = C[i % 4].v + 1; i = (i + 1) % 8; k++ }
  :: k < 4 -> q[i % 3]!A[i]; k++
  :: k >= 4 -> break
  od
}

active [2] proctype Reader() {
  byte x;
  do
  :: q[_pid % 3]?x -> A[x % 8] = x + _pid
  :: q[(_pid + 1) % 3]?x -> C[x % 4].w[x % 3] = x
  od
}
