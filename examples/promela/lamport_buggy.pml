/* BUGGY bakery algorithm for two processes, with tickets bounded by MAX: a process takes
 * the largest ticket instead of one more (the "+ 1" is missing), so the first process to
 * choose gets ticket 0, which means "not competing", and both enter.
 *
 * absmc check lamport_buggy.pml --method fourvalued finds the violation with the same ticket
 * order predicates at every bound: value f, with a counterexample built along the
 * must-abstraction and replayed on the concrete model.
 * SPIN does not know Bonsai's `pred` declarations: give it -DNOPRED.
 */
#ifndef MAX
#define MAX 4096       /* ticket bound: a process whose ticket would exceed it stops */
#endif

int n[2];              /* tickets, 0: not competing */
bool choosing[2];
byte ncrit;            /* processes in the critical section */

active [2] proctype P()
{
#ifndef NOPRED
	/* the ticket order, per process (pred declarations of a proctype, Bonsai Sec. 3.1) */
	pred n[_pid] == 0;
	pred n[_pid] < MAX;
#ifndef WEAK
	pred n[_pid] < n[1 - _pid];
#endif
#endif

	do
	:: choosing[_pid] = true;
	   if
	   :: (n[0] > n[1] -> n[0] : n[1]) < MAX ->
	      n[_pid] = (n[0] > n[1] -> n[0] : n[1])     /* THE BUG: + 1 is missing */
	   :: else ->                            /* out of tickets: stop */
	      choosing[_pid] = false;
	      break
	   fi;
	   choosing[_pid] = false;
	   !choosing[1 - _pid];                   /* wait until the other has chosen */
	   /* wait for our turn: (n[i], i) < (n[j], j) */
	   (n[1 - _pid] == 0 || n[_pid] < n[1 - _pid]
	    || (n[_pid] == n[1 - _pid] && _pid < 1 - _pid));
	   ncrit++;
	   assert(ncrit == 1);                    /* mutual exclusion */
	   ncrit--;
	   n[_pid] = 0
	od
}
