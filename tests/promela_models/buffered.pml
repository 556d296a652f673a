/* buffered channels: sorted send, random receive, poll, len/full/empty */
chan q = [3] of { byte, byte };
byte last, k;
active proctype S() {
  do
  :: nfull(q) && k < 5 -> q!!(k * 7 % 4), k; k++
  :: k >= 5 -> break
  od
}
active proctype R() {
  byte a, b;
end:
  do
  :: q??[1, b] -> q??1, b; last = b
  :: q?a, b -> last = a
  :: empty(q) && k >= 5 -> break
  :: len(q) == 3 -> q?<a, b>; skip
  od
}
