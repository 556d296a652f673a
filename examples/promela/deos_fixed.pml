/* The corrected version of deos.pml (a model in the shape of the DEOS example of Dwyer et
 * al., ICSE 2001, Section 8 and Fig. 5; the Promela counterpart of examples/gcl/deos_fixed.gcl;
 * see deos.pml for the correspondence with Fig. 5).
 *
 * The correction: a restart of the period counter also invalidates the thread's record of its
 * last execution, so the first scheduling decision after a restart always renews the budget.
 * deos_fixed.gcl writes itsLastExecution = -1 ("never"); that is not enough here: a Promela
 * int has 32 bits, period_id wraps around after 2^31 periods and may itself be -1 when the
 * thread reads it (then a restart makes cp == last_exec == -1 again). The abstraction does not
 * prove that variant (a counterexample through the wrap-around is a choose); a separate
 * validity flag is correct for every value of the counter:
 *
 *   absmc check examples/promela/deos_fixed.pml --method types --abstract period_id=signs
 *
 * proves the assertion (and the absence of invalid end states and model errors) on the signs
 * abstraction. Exact search meets ever new values of period_id: with a state limit it ends
 * unknown.
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
bool exec_valid = true;   /* last_exec is a period of the current run of the period counter */

active proctype Tick()    /* the tick generator calls pulseEvent */
{
  do
  :: count_down > 1 -> count_down--
  :: atomic { count_down == 1 && frame < 63 -> count_down = 2; frame++; period_id++ }
  :: atomic { count_down == 1 && frame == 63 -> count_down = 2; frame = 0; period_id++ }
  :: atomic { count_down == 1 && frame == 63 ->     /* restart (a mode change) */
       count_down = 2; frame = 0; period_id = 0; reset_pending = true;
       exec_valid = false }
  od
}

active proctype Thread()
{
  atomic { last_exec = period_id; last_compl = period_id };    /* startThread */
  do
  :: cp = period_id;                                           /* startChargingCPUTime */
     atomic {
       if
       :: cp == last_exec && exec_valid -> skip       /* same period: budget left over */
       :: else -> last_exec = cp; exec_valid = true; budget = 2    /* new period: full budget */
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
