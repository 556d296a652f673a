/* timeout fires only when nothing else can move; else when no option can */
byte n;
active proctype P() {
  do
  :: n < 3 -> n++
  :: timeout -> break
  od;
  if
  :: n == 2 -> skip
  :: else -> n = 0
  fi
}
active proctype Q() { n > 2; n = 7 }
