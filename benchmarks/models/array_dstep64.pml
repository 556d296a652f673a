/* A 64-byte array with four computed-index accesses in one d_step (issue 14's slow case: the
   per-element case split made 29 s of generated code; direct indexing loads in well under 1 s). */
#define N 64
byte A[N];
byte i, j, n;

active proctype P() {
  do
  :: n < 7 -> d_step { A[i] = A[j] + 1; A[j] = A[i] + A[(i + j) % N]; j = (j + A[i]) % N; i = (i + 5) % N; n++ }
  :: n < 7 -> d_step { i = (i + 1) % N; n++ }
  :: n < 7 -> d_step { A[(i * 3) % N] = A[j] + A[i]; j = (j + 9) % N; n++ }
  :: n >= 7 -> break
  od
}
