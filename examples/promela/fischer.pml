/* Fischer's mutual exclusion protocol for two processes in discrete time, with the clock
 * bounded by MAX (time stops at MAX).
 *
 * A process that reads lock == 0 must write its id within D time units; after writing it
 * waits K > D units and enters the critical section if lock still holds its id. The
 * concrete state space grows with MAX (spin -DNOPRED -DMAX=...); the four-valued abstraction
 * (absmc check fischer.pml --method fourvalued) keeps only the remaining time of each process,
 * given by the `pred` declarations below, and proves mutual exclusion with the same abstract
 * state space at every bound (Vijzelaar et al., "Bonsai: Cutting Models Down to Size",
 * Section 4: "it is sufficient to keep track of remaining wait time, instead of absolute values
 * of the clock and timers").
 * SPIN does not know Bonsai's `pred` declarations: give it -DNOPRED.
 */
#ifndef MAX
#define MAX 4096          /* time bound */
#endif
#define D 2               /* a process that read lock == 0 writes within D time units */
#define K 3               /* then it waits K time units (K > D: the protocol is correct) */

int now;                  /* the global clock */
int d[2];                 /* deadline: latest write (set), earliest check (wait) */
bool pending[2];          /* in set or wait: time may not pass the deadline */
byte lock;                /* 0: free, else 1 + pid of the last writer */
byte ncrit;               /* processes in the critical section */

#ifndef NOPRED            /* SPIN does not know Bonsai's pred: spin -DNOPRED */
pred now < MAX;           /* the time budget, and no 32-bit wrap-around of now + K */
pred now <= MAX;
pred now + 1 < MAX;
#endif

active [2] proctype P()
{
#ifndef NOPRED
	/* remaining time d - now in 0..3 (pred declarations of a proctype, Bonsai Sec. 3.1) */
	pred now < d[_pid];
	pred now + 1 < d[_pid];
	pred now + 2 < d[_pid];
	pred now + 3 < d[_pid];
#endif

	do
	:: atomic { lock == 0 -> d[_pid] = now + D; pending[_pid] = true };   /* read 0 */
	   atomic { lock = _pid + 1; d[_pid] = now + K };                     /* write, wait */
	   if
	   :: atomic { now >= d[_pid] && lock == _pid + 1 -> pending[_pid] = false; d[_pid] = 0 };
	      ncrit++;
	      assert(ncrit == 1);                                              /* mutual exclusion */
	      ncrit--;
	      lock = 0
	   :: atomic { now >= d[_pid] && lock != _pid + 1 -> pending[_pid] = false; d[_pid] = 0 }
	                                                                      /* lost: retry */
	   fi
	od
}

active proctype Clock()
{
end:	do
	:: atomic { now < MAX && (!pending[0] || now < d[0]) && (!pending[1] || now < d[1]) -> now++ }
	:: now >= MAX               /* time is up: the clock idles */
	od
}
