/* Peterson's mutual exclusion for two processes.
 * mutex holds; the response property holds only under weak fairness
 * (without it, the scheduler may ignore the waiting process forever). */
bool flag[2];
byte turn;
byte incs;

active [2] proctype P()
{
again:
	flag[_pid] = 1;
	turn = 1 - _pid;
	(flag[1 - _pid] == 0 || turn == _pid);
cs:	incs++;
	incs--;
	flag[_pid] = 0;
	goto again
}

ltl mutex { [] (incs <= 1) }
ltl response0 { [] (flag[0] -> <> P[0]@cs) }
ltl infinitely_often { []<> P[1]@cs }
