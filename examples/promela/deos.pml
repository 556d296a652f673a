/* A model in the shape of the DEOS real-time kernel example of Dwyer et al., "Tool-supported
 * Program Abstraction for Finite-state Verification" (ICSE 2001), Section 8 and Fig. 5: the
 * Promela version of examples/gcl/deos.gcl. Not the DEOS code: the fragments of Fig. 5 with a
 * time-partitioning defect of the same kind, for type-based abstraction (--method types).
 *
 *   StartOfPeriodEvent.pulseEvent (proctype Tick): countDown is decremented at every tick;
 *   when it reaches zero a new period starts and itsPeriodId is incremented (without bound).
 *   A mode change may restart the event at the end of a major frame of 64 periods:
 *   itsPeriodId = 0 again, as in the event's constructor.
 *   Thread.startThread: itsLastExecution = itsLastCompletion = currentPeriod().
 *   Thread.startChargingCPUTime: cp = currentPeriod(); if (cp == itsLastExecution) the thread
 *   runs on what is left of its budget, else a new period began and the budget is renewed.
 *
 * The defect: a thread that last ran in period 0 before a restart sees period 0 again after
 * it, takes it for the same period and runs on its old budget. The assertion observes this
 * (after_reset: the thread's first scheduling decision after a restart). See deos_fixed.pml.
 *
 *   absmc check examples/promela/deos.pml --method types --abstract period_id=signs
 *
 * Type inference makes cp, last_exec and last_compl signs too (they copy period_id); the
 * abstract search is exhaustive, and the choose-free search finds a counterexample that
 * replays on this model. Exact search meets ever new values of period_id (a 32-bit int: it
 * would wrap after 2^31 periods): with a state limit it ends unknown.
 */

int period_id = 0;        /* StartOfPeriodEvent.itsPeriodId */
byte count_down = 2;      /* StartOfPeriodEvent.countDown (ticks left in the period) */
byte frame = 0;           /* periods since the start of the major frame */
bool reset_pending;       /* observer: a restart happened, no scheduling decision since */
int cp;                   /* Thread.startChargingCPUTime: int cp */
int last_exec;            /* Thread.itsLastExecution */
int last_compl;           /* Thread.itsLastCompletion */
byte budget = 2;          /* CPU time left to the thread in the current period */
bool after_reset;         /* observer: the thread's last decision was the first after a restart */

active proctype Tick()    /* the tick generator calls pulseEvent */
{
  do
  :: count_down > 1 -> count_down--
  :: atomic { count_down == 1 && frame < 63 -> count_down = 2; frame++; period_id++ }
  :: atomic { count_down == 1 && frame == 63 -> count_down = 2; frame = 0; period_id++ }
  :: atomic { count_down == 1 && frame == 63 ->     /* restart (a mode change) */
       count_down = 2; frame = 0; period_id = 0; reset_pending = true }
  od
}

active proctype Thread()
{
  atomic { last_exec = period_id; last_compl = period_id };    /* startThread */
  do
  :: cp = period_id;                                           /* startChargingCPUTime */
     atomic {
       if
       :: cp == last_exec -> skip                     /* same period: budget left over */
       :: else -> last_exec = cp; budget = 2          /* a new period: full budget */
       fi;
       after_reset = reset_pending; reset_pending = false
     };
     /* time partitioning: after a restart the thread is scheduled with its full budget */
     assert(!after_reset || budget == 2);
     if
     :: budget > 0 -> budget--                        /* runs for one tick */
     :: else -> skip                                  /* waits for the next period */
     fi;
     last_compl = cp
  od
}
