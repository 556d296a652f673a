/* long channels of wide and negative values (one state variable holds all messages) */
chan inp = [8] of { short, bit };
chan out = [8] of { int };
active proctype Producer() {
  inp!-345,1; inp!12,0; inp!-32768,1; inp!32767,0; inp!0,1
}
active proctype Filter() {
  short v; bit f;
end:
  do
  :: inp?v,f -> if :: f -> out!v * 70000 :: else -> out!v fi
  od
}
active proctype Consumer() {
  int w;
end:
  do
  :: out?w -> assert(w != 1)
  od
}
