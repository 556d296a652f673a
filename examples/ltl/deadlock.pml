/* Two processes that may deadlock; liveness cannot hold after the deadlock either. */
bool a, b;
byte done;

active proctype P()
{
	a = 1;
	b == 0;
	done++
}

active proctype Q()
{
	b = 1;
	a == 0;
	done++
}

ltl finishes { <> (done == 1) }
