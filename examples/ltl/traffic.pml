/* A traffic light: green, yellow, red, forever; a pedestrian button may be pressed. */
mtype = { red, yellow, green };
mtype light = red;
bool button;

active proctype Light()
{
	do
	:: light == red -> light = green
	:: light == green -> light = yellow
	:: light == yellow -> light = red; button = 0
	od
}

active proctype Pedestrian()
{
	do
	:: !button -> button = 1
	od
}

ltl always_green_again { [] <> (light == green) }
ltl red_after_yellow { [] ((light == yellow) -> ((light == yellow) U (light == red))) }
ltl button_served { [] (button -> <> !button) }
