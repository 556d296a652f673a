/* processes created by created processes: local channels in slots that can hold several
   proctypes, a pid stored with 'x = run P()', processes that end and free their pid */
chan done = [4] of { byte };
byte who;

proctype Leaf(chan c; byte v)
{
	c!v
}

proctype Mid(byte k)
{
	chan mine = [1] of { byte };
	byte x;
	atomic {
		run Leaf(mine, k);
		who = run Leaf(done, k + 10)
	};
	mine?x;
	assert(x == k)
}

init {
	atomic { run Mid(1); run Mid(2) };
	done?_; done?_
}
