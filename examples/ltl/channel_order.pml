/* FIFO order: messages are received in the order sent; weak until and release. */
chan c = [2] of { byte };
byte last, sent;

active proctype Producer()
{
	do
	:: sent < 4 -> c ! sent; sent++
	:: sent == 4 -> break
	od
}

active proctype Consumer()
{
	byte v;
	do
	:: c ? v -> assert(v >= last); last = v
	od
}

ltl ordered { [] (last <= sent) }
ltl release { (sent == 4) V (len(c) <= 2) }
ltl empties { <> [] (len(c) == 0) }
ltl words { always (sent <= 4) && eventually (sent == 4) }
