/* Leader election on a unidirectional ring (Chang-Roberts / LCR) with 3 nodes. */
#define N 3
chan ring[N] = [N] of { byte };
byte leaders;

proctype node(byte me; byte id)
{
	byte v;
	ring[(me + 1) % N] ! id;
	do
	:: ring[me] ? v ->
		if
		:: v > id -> ring[(me + 1) % N] ! v
		:: v == id -> leaders++; break
		:: else -> skip
		fi
	od
}

init {
	atomic {
		run node(0, 2);
		run node(1, 3);
		run node(2, 1)
	}
}

ltl one_leader { <> [] (leaders == 1) }
ltl at_most_one { [] (leaders <= 1) }
ltl two_leaders { <> (leaders == 2) }
