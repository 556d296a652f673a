/* creators that do not keep control between their runs; a pid reused after a process
   ends; the assertion fails in some interleavings (who can be 3) */
byte who, n;

proctype Worker()
{
	n++
}

proctype Boss()
{
	run Worker();
	who = run Worker();
	assert(who != 3)
}

init {
	run Boss();
	run Boss()
}
