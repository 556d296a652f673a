/* inner if as the second option: else sees only the options before it */
byte x, y;
active proctype P() {
  do
  :: x < 3 -> x++
  :: if
     :: x == 1 -> y = 1
     :: else -> y = 2
     fi
  :: x == 3 -> break
  od;
  y < 3
}
