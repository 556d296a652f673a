/* run with arguments, _pid, _nr_pr, process termination order */
byte sum;
proctype W(byte v) { sum = sum + v * _pid; assert(_nr_pr >= 2) }
init {
  byte i;
  atomic { i = 1; do :: i <= 3 -> run W(i); i++ :: else -> break od }
  _nr_pr == 1;
  assert(sum == 1 * 1 + 2 * 2 + 3 * 3)
}
