/* Response pattern: every request is eventually acknowledged (holds), and
 * acknowledgments come only after requests (precedence, holds). */
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
	od
}

ltl response { [] (req -> <> ack) }
ltl precedence { !ack W req }
ltl never_ack { [] !ack }
