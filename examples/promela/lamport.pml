/* Lamport's bakery algorithm for two processes, with tickets bounded by MAX.
 *
 * The concrete state space grows with MAX (spin -DNOPRED -DMAX=...); the four-valued
 * abstraction (absmc check lamport.pml --method fourvalued) keeps only the order of the
 * tickets, given by the `pred` declarations below, and proves mutual exclusion with the same
 * abstract state space at every bound (Vijzelaar et al., "Bonsai: Cutting Models Down to
 * Size", Section 4: "it is sufficient to map the relative ordering of ticket numbers").
 * With -D WEAK the ticket order is left out: the value is then unknown (⊥), with the abstract
 * trace that the predicates cannot decide.
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
	      n[_pid] = (n[0] > n[1] -> n[0] : n[1]) + 1
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
