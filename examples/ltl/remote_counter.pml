/* Remote variable references in ltl blocks: P[pid]:var reads a process's local variable. */
active [2] proctype P()
{
	byte n;
	do
	:: n < 3 -> n++
	:: n == 3 -> n = 0
	od
}

ltl bounded { [] (P[0]:n <= 3 && P[1]:n <= 3) }
ltl p0_returns { [] <> (P[0]:n == 0) }
ltl sum_small { [] (P[0]:n + P[1]:n < 6) }
