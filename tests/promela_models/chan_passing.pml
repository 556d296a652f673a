/* rendezvous on channel variables that may denote several channels with the same fields
   (one joint command per send and receive, guarded by 'both name the same channel'); a
   channel passed over a channel, receives with constants, a buffered channel of the same
   fields among the candidates */
mtype = { req, ack, bye };
chan a = [0] of { mtype, byte };
chan b = [0] of { mtype, byte };
chan c = [1] of { mtype, byte };
chan link = [0] of { chan };
byte got;

proctype Client(chan mine)
{
	chan to;
	link?to;
	to!req,1;
	mine?ack,got;
	to!bye,0
}

proctype Server(chan first, second)
{
	chan use = first;
	byte v;
	link!use;
	do
	:: use?req,v -> if :: second!ack,v+1 :: c!ack,v fi
	:: use?bye,_ -> break
	od;
	assert(got <= 2)
}

init {
	atomic {
		run Client(b);
		run Server(a, b)
	}
}
