/* A hand-written never claim (what `spin -f '!([] (req -> <> ack))'` prints) on a lossy
 * request/acknowledge pair: the response property is violated (a request may be dropped). */
bool req, ack;

active proctype client()
{
	do
	:: !req && !ack -> req = 1
	:: ack -> ack = 0
	od
}

active proctype server()
{
	do
	:: req -> req = 0; ack = 1
	:: req -> req = 0
	od
}

never {    /* !([] (req -> <> ack)) */
T0_init:
	do
	:: (! ((ack)) && (req)) -> goto accept_S4
	:: (1) -> goto T0_init
	od;
accept_S4:
	do
	:: (! ((ack))) -> goto accept_S4
	od;
}
