/* shift operators in assignments and guards (SPIN accepts `<<` and `>>`) */
byte x = 1;
byte y = 200;
int z = -9;

active proctype Shifter() {
  do
  :: x << 2 < 100 -> x = x << 2
  :: y >> 1 > 3 -> y = y >> 1
  :: (x >> 1) + (y >> 5) == 8 -> z = z >> 1
  :: x << 2 >= 100 && y >> 1 <= 3 -> break
  od;
  assert(x == 64 && y == 6);
  assert(z << 1 < 0)
}
