/* an array index out of bounds is an error */
byte a[3], i;
active proctype P() { do :: i < 5 -> a[i] = 1; i++ :: else -> break od }
