/* A terminating process: its end state stutters (SPIN's semantics). */
byte x;

active proctype P()
{
	do
	:: x < 3 -> x++
	:: x == 3 -> break
	od
}

ltl reaches_three { <> (x == 3) }
ltl stays_three { <> [] (x == 3) }
ltl until_three { (x < 3) U (x == 3) }
ltl back_to_zero { [] <> (x == 0) }
