/* provided clauses, hidden temporaries, unless */
hidden byte tmp;
byte turn, x;
active proctype A() provided (turn == 0) { do :: d_step { tmp = x; x = tmp + 1; turn = 1 } :: x > 4 -> break od }
active proctype B() provided (turn == 1) { do :: turn = 0 :: x > 4 -> break od }
active proctype C() { { do :: x < 9 -> skip od } unless { x > 3 }; x = 0 }
