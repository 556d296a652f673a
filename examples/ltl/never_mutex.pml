/* Peterson's mutual exclusion with a hand-written safety claim (the claim terminates when
 * both processes are in their critical sections: it never does) and a counter of entries. */
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

never {
	do
	:: P[0]@cs && P[1]@cs -> break
	:: else
	od
}
