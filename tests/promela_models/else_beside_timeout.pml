/* else as the only option of an if at the head of a do, with a timeout beside it */
byte x, y;
active proctype P() {
  do
  :: if
     :: else -> x++
     fi;
     x < 3
  :: timeout -> break
  :: y > 0 -> y--
  od
}
active proctype Q() { x == 2 -> y = 2 }
