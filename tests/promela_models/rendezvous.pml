/* rendezvous inside atomic: the receiver keeps control when its receive is atomic */
mtype = { req, ack };
chan c = [0] of { mtype, byte };
chan d = [0] of { mtype };
byte got, cnt;
active [2] proctype Client() {
  do
  :: atomic { c!req,_pid; d?ack; cnt++ }
  :: cnt > 3 -> break
  od
}
active proctype Server() {
  byte who;
end:
  do
  :: atomic { c?req,who; got = who; d!ack }
  od
}
