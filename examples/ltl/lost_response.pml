/* Response pattern violated: the server may drop a request. */
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

ltl response { [] (req -> <> ack) }
ltl precedence { !ack W req }
