/* Two processes and a buffered channel: the receiver expects the messages in the order
 * 1, 2 but the sender may send 2 first. absmc check finds the assertion violation; the HTML
 * report (absmc check --html report.html) draws the run as a message sequence chart. */
chan c = [2] of { byte };
byte got;

active proctype Sender()
{
	if
	:: c!1; c!2
	:: c!2; c!1
	fi
}

active proctype Receiver()
{
	byte x;
	c?x;
	got = x;
	c?x;
	assert(got == 1 && x == 2)
}
