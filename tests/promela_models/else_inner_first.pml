/* else of an inner if, the do's first option; the do's later options run beside it */
byte x, y;
active proctype P() {
  do
  :: if
     :: x < 2 -> x++
     :: else -> y = (y + 1) % 4
     fi
  :: x > 0 -> x--
  :: y > 2 -> break
  od
}
