/* issue 24: an if whose only option is else, first option of a do */
byte y;
active proctype P() {
  do
  :: if
     :: else -> y = 2
     fi
  :: y > 0 -> break
  od;
  assert(y == 2)
}
