/* A broken mutual exclusion: test, then set (not atomic). */
bool busy;

active [2] proctype P()
{
	do
	:: !busy ->
		busy = 1;
cs:		skip;
		busy = 0
	od
}

ltl mutex { [] !(P[0]@cs && P[1]@cs) }
ltl no_starvation { [] <> P[0]@cs }
