/* Alternating bit protocol over a lossy channel, with a progress label on delivery. */
mtype = { msg, ack };
chan to_r = [1] of { mtype, bit };
chan to_s = [1] of { mtype, bit };
byte delivered;

active proctype Sender()
{
	bit b;
	do
	:: to_r ! msg(b) ->
		if
		:: to_s ? ack(eval(b)) -> b = 1 - b
		:: to_s ? ack(eval(1 - b))
		:: timeout
		fi
	od
}

active proctype Receiver()
{
	bit expect, got;
	do
	:: to_r ? msg(got) ->
		if
		:: got == expect ->
progress:		delivered = (delivered + 1) % 4;
			expect = 1 - expect
		:: else
		fi;
		to_s ! ack(got)
	od
}

active proctype Lossy()
{
	do
	:: to_r ? _, _
	:: to_s ? _, _
	od
}

ltl delivers { [] <> Receiver@progress }
