# rolling.sh — hosts with different settings on one prefix: how long a slot is
# remembered is the store's (the most demanding host's), never the winner's alone.
# (sourced by test/redis/run.sh)

# roll_eq NAME GOT WANT
roll_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $3" "got: $2"; fi; }

# A winner with a short memory (max_late_ms 2000, lease_ms 1000 keeps its run
# 3 s past the lease) and, 5 s later, a host that may claim 60 s late: the
# second must not win the slot again.
S=$(now_slot)
drive rolling-short "$URL?strategy=lease&prefix=roll1" <<X
set max_late_ms 2000
set lease_ms 1000
claim mixed $S short
finish mixed $S short
X
# The scenario's wait: past the short host's own memory of the run (4 s after its lease).
sleep 5
drive rolling-long "$URL?strategy=lease&prefix=roll1" <<X
claim mixed $S long
X
roll_eq "redis rolling: the short host won the slot" "$(grep -v "^ok" "$tmp/rolling-short.out" | head -n 1)" "won 1"
if grep -q '^won' "$tmp/rolling-long.out"; then
	not_ok "redis rolling: a host with a longer max_late_ms does not win a slot again" "$(cat "$tmp/rolling-long.out")"
else
	ok "redis rolling: a host with a longer max_late_ms does not win a slot again"
fi

# The other order: the demanding host has claimed once (the store now keeps
# its memory); a short host's win is then kept that long, and a later claim of
# the demanding host finds the run (done), not an empty slot.
S=$(now_slot)
drive rolling-long2 "$URL?strategy=lease&prefix=roll2" <<X
claim kept $((S - 1000)) long
finish kept $((S - 1000)) long
X
drive rolling-short2 "$URL?strategy=lease&prefix=roll2" <<X
set max_late_ms 2000
set lease_ms 1000
claim kept $S short
finish kept $S short
X
# The scenario's wait: past the short host's own memory of the run.
sleep 5
drive rolling-long3 "$URL?strategy=lease&prefix=roll2" <<X
claim kept $S long
X
roll_eq "redis rolling: the short host's win after a demanding host" "$(grep -v "^ok" "$tmp/rolling-short2.out" | head -n 1)" "won 1"
roll_eq "redis rolling: the run is kept as long as the most demanding host needs" "$(cat "$tmp/rolling-long3.out")" "done 1"

# A run written by 0.1.0 (no 'promise' field), kept 10 s on its winner's
# settings: a 0.2.0 host that may claim the slot 60 s late refuses, naming the
# older format; one whose max_late_ms ends before the run expires answers done.
S=$(now_slot)
redis-cli -p "$PORT" HSET "roll3:{old}:run:$S" state succeeded attempt 1 token x lease_until "$S" claimed_at "$S" > /dev/null
redis-cli -p "$PORT" PEXPIRE "roll3:{old}:run:$S" 10000 > /dev/null
drive rolling-old "$URL?strategy=lease&prefix=roll3" <<X
claim old $S new
set max_late_ms 2000
claim old $S new
X
has "redis rolling: a 0.1.0 run kept shorter than this host's max_late_ms is refused" "$(sed -n 1p "$tmp/rolling-old.out")" "error CONFIG: redis store"
has "redis rolling: the refusal names 0.1.0" "$(sed -n 1p "$tmp/rolling-old.out")" "written by anarchon 0.1.0"
roll_eq "redis rolling: a 0.1.0 run kept long enough answers as before" "$(sed -n 3p "$tmp/rolling-old.out")" "done 1"
