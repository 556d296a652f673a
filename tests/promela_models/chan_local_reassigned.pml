/* local channels declared with initialisers and assigned later (the local counterpart of
   chan_reassigned.pml): each process swaps its own channel with a global one or with the
   one another process hands it; no process ends (SPIN deletes a process's channels when
   it ends) */
chan g = [1] of { byte };
chan hand = [0] of { chan };

proctype Worker(byte id) {
  chan mine = [1] of { byte };
  chan t;
  byte v;
  mine!id;
  if
  :: t = mine; mine = g; g = t
  :: hand!mine
  :: hand?t -> mine = t
  fi;
end:
  do
  :: mine?v -> assert(v != 2 || id == 1); g!v
  :: g?v -> mine!v
  od
}

init {
  atomic { run Worker(1); run Worker(2) }
}
