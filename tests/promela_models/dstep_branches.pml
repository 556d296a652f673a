/* d_step with branches and a loop over a counter it sets itself */
byte a[4], i, s;
active proctype P() {
  do
  :: d_step {
       i = 0;
       do
       :: i < 4 -> a[i] = (a[i] + i + s) % 3; i++
       :: else -> break
       od;
       if :: a[0] > a[1] -> s++ :: a[0] <= a[1] -> s = s + 2 fi;
       s = s % 5
     }
  od
}
