/* local channels are created with their process and deleted with it; for (x in array) */
byte sum, a[3];
proctype Worker(chan reply; byte k) {
  chan inbox = [2] of { byte };
  inbox!k; inbox!k + 1;
  byte v;
  do
  :: inbox?v -> reply!v
  :: empty(inbox) -> break
  od
}
init {
  chan r = [4] of { byte };
  byte i, x;
  atomic { run Worker(r, 1); run Worker(r, 5) }
  for (i in a) { r?x; a[i] = x; sum = sum + x }
  r?x; sum = sum + x;
  _nr_pr == 1;
  assert(sum == 1 + 2 + 5 + 6)
}
