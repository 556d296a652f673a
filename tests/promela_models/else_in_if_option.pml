/* inner if as the first option of an outer if */
byte x, y;
active proctype P() {
  do
  :: x < 4 ->
     if
     :: if
        :: x % 2 == 0 -> x++
        :: else -> y = x
        fi
     :: x == 1 -> x = x + 2
     :: x == 3 -> x = 4
     fi
  :: else -> break
  od
}
active proctype Q() { x < 4 -> x = 0 }
