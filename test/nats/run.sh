#!/usr/bin/env bash
# The NATS JetStream suite: the store through the store interface (the
# mq-driver), then through SQLite.  Real nats-server processes with JetStream
# run on free loopback ports with their stores in a temporary folder.
#
# What it shows: the claim's outcomes (won, lost, our own resent claim, late),
# job names with '.', what heartbeat/finish/check answer, configuration
# errors, a stream on memory storage refused unless the URL accepts the
# risk, 16 processes x 300 slots with exactly one winner per slot, a restart
# that forgets nothing, a frozen server that answers within timeout_ms, and a
# cancel that is noticed at once.
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT" || exit 1
source test/amqp/mq.sh
source test/nats/server.sh

mq_build || { suite_end; exit; }
nats_start main || { not_ok "nats: start nats-server -js"; suite_end; exit; }
ok "nats: nats-server -js on 127.0.0.1:${NATS_PORT[main]}"
U="nats://127.0.0.1:${NATS_PORT[main]}"

# ---------------------------------------------------------------- outcomes
S=$(mq_now)
expect "nats: first claim of a slot wins" won drv "$U" claim sync "$S" tokA
expect "nats: another token's claim of that slot loses" lost drv "$U" claim sync "$S" tokB
expect "nats: our own claim sent again wins (same token)" won drv "$U" claim sync "$S" tokA
expect "nats: the next slot is a new run" won drv "$U" claim sync "$((S + 1))" tokB
expect "nats: a claim more than max_late_ms after its slot is late" late drv "$U" claim sync "$((S - 61000))" tokA
expect "nats: a claim within max_late_ms is not late" won drv "$U" claim sync "$(( $(mq_now) - 50000 ))" tokA
expect "nats: max_late_ms is the host's setting (-l)" late drv -l 10000 "$U" claim sync "$((S - 20000))" tokA
expect "nats: a late claim stored nothing" won drv -l 30000 "$U" claim sync "$((S - 20000))" tokB
expect "nats: our own claim, sent again after max_late_ms, is still won" won drv -l 10000 "$U" claim sync "$((S - 20000))" tokB
expect "nats: another token's claim after max_late_ms is late, not lost" late drv -l 10000 "$U" claim sync "$((S - 20000))" tokC

# Job names with '.': one subject token, the Msg-Id keeps the name.
expect "nats: job a.b wins its slot" won drv "$U" claim a.b "$S" tokA
expect "nats: job a.b is not job a%2Eb's neighbour a" won drv "$U" claim a "$S" tokA
expect_match "nats: job a.b is stored on subject cron.a%2Eb.claims (3 tokens)" \
	"\"subject\":\"cron.a%2Eb.claims\"" nats_api main '$JS.API.STREAM.MSG.GET.CRON' '{"last_by_subj":"cron.a%2Eb.claims"}'
msg_headers() { nats_api main '$JS.API.STREAM.MSG.GET.CRON' "{\"last_by_subj\":\"$1\"}" | sed 's/.*"hdrs":"\([^"]*\)".*/\1/' | base64 -d; }
expect_match "nats: its Msg-Id is a.b:SLOT" "^Nats-Msg-Id: a.b:$S" msg_headers 'cron.a%2Eb.claims'
expect_match "nats: the stream CRON takes cron.> with a 120 s duplicate window, file storage" \
	'"subjects":\["cron.\\u003e"\].*"storage":"file".*"duplicate_window":120000000000' \
	nats_api main '$JS.API.STREAM.INFO.CRON' ''
expect "nats: prefix= and stream= choose other names" won drv "$U?prefix=other&stream=OTHER" claim sync "$S" tokB
expect_match "nats: ... and the stream OTHER takes other.>" '"subjects":\["other.\\u003e"\]' \
	nats_api main '$JS.API.STREAM.INFO.OTHER' ''

mq_long nats "$U" "$S" won succeeded

# ---------------------------------------------------------------- heartbeat, finish, check
S=$((S + 10))
drv "$U" claim hb "$S" winner > /dev/null
expect "nats: check of a claimed run answers running" running drv "$U" check hb "$S"
expect "nats: check of an unclaimed slot answers none" none drv "$U" check hb "$((S + 5))"
expect "nats: heartbeat of the winner's token is true" true drv "$U" heartbeat hb "$S" winner
expect "nats: heartbeat of another token is false" false drv "$U" heartbeat hb "$S" other
expect "nats: finish with another token is false and records nothing" false drv "$U" finish hb "$S" other
expect "nats: ... check still answers running" running drv "$U" check hb "$S"
expect "nats: finish with the winner's token is true" true drv "$U" finish hb "$S" winner
expect "nats: check after finish answers succeeded" succeeded drv "$U" check hb "$S"
expect "nats: the same finish sent again is true (a resend whose answer was lost)" true drv "$U" finish hb "$S" winner
expect "nats: a second finish with another status is false and changes nothing" false drv "$U" finish hb "$S" winner failed
expect "nats: ... still succeeded" succeeded drv "$U" check hb "$S"
expect "nats: heartbeat after finish is false" false drv "$U" heartbeat hb "$S" winner
drv "$U" claim hb "$((S + 1))" w2 > /dev/null
expect "nats: finish failed is recorded as failed" failed sh -c "'$DRV' '$U' finish hb $((S + 1)) w2 failed >/dev/null; '$DRV' '$U' check hb $((S + 1))"
printf 'claim hb %s t1\nclaim hb %s t1\nheartbeat hb %s t1\nheartbeat hb %s t2\n' \
	"$((S + 2))" "$((S + 3))" "$((S + 2))" "$((S + 2))" > "$MQ_TMP/nats-session.in"
expect "nats: in one session, an older run's heartbeat finds its claim by sequence" "won
won
true
false" sh -c "'$DRV' '$U' session < '$MQ_TMP/nats-session.in'"

# From other connections, runs older than the job's latest are found too.
drv "$U" claim old "$S" w1 > /dev/null
drv "$U" claim old "$((S + 1))" w2 > /dev/null
drv "$U" claim old "$((S + 3))" w3 > /dev/null
expect "nats: another connection: heartbeat of an older run finds its claim" "true
false" sh -c "'$DRV' '$U' heartbeat old $S w1; '$DRV' '$U' heartbeat old $S w2"
expect "nats: another connection: check of an older run answers running, of a slot between runs none" "running
none" sh -c "'$DRV' '$U' check old $S; '$DRV' '$U' check old $((S + 2))"
expect "nats: another connection: finish an older run, then a newer one; check finds both" "true
true
failed
succeeded" sh -c "'$DRV' '$U' finish old $S w1 failed; '$DRV' '$U' finish old $((S + 3)) w3; '$DRV' '$U' check old $S; '$DRV' '$U' check old $((S + 3))"

# ---------------------------------------------------------------- configuration errors
expect_match "nats: duplicate_window_ms shorter than max_late_ms is refused" \
	'^error config: the duplicate window \(duplicate_window_ms\) \(30000 ms\) is shorter than max_late_ms \(60000 ms\)' \
	drv "$U?stream=SHORT&duplicate_window_ms=30000" claim sync "$S" tokA
expect_match "nats: ... and no stream was created with it" '"code":404' nats_api main '$JS.API.STREAM.INFO.SHORT' ''
nats_api main '$JS.API.STREAM.CREATE.EXISTING' '{"name":"EXISTING","subjects":["ex.>"],"storage":"file","duplicate_window":5000000000}' > /dev/null
expect_match "nats: an existing stream whose window is shorter than max_late_ms is refused" \
	'^error config: the duplicate window of the NATS stream EXISTING \(5000 ms\) is shorter than max_late_ms' \
	drv "$U?stream=EXISTING&prefix=ex" claim sync "$S" tokA
expect "nats: ... and accepted when max_late_ms fits in it" won drv -l 4000 "$U?stream=EXISTING&prefix=ex&max_skew_ms=500" claim sync "$(mq_now)" tokA
expect_match "nats: ... and refused when it leaves less than twice max_skew_ms for clocks that disagree" \
	'^error config: the duplicate window of the NATS stream EXISTING \(5000 ms\) is shorter than max_late_ms \(4000 ms\) plus twice max_skew_ms \(501 ms\)' \
	drv -l 4000 "$U?stream=EXISTING&prefix=ex&max_skew_ms=501" claim sync "$(mq_now)" tokB

# Clocks that disagree (-k moves an instance's clock).  Stream SKEW remembers
# a claim for 3 s; with max_late_ms 1000 that allows max_skew_ms 1000.
# Within it: A, 1 s ahead, wins a slot as its clock reaches the slot; B, 1 s
# behind, claims it 2.5 s later, still not late by its own clock; the window
# still holds A's claim, so B loses.  Past it (4 s either way): B claims after
# the server forgot A's claim and wins too, which is why the check exists.
nats_api main '$JS.API.STREAM.CREATE.SKEW' '{"name":"SKEW","subjects":["skew.>"],"storage":"file","duplicate_window":3000000000}' > /dev/null
SK="$U?stream=SKEW&prefix=skew&max_skew_ms=1000"
t=$(mq_now)
a=$(drv -l 1000 -k 1000 "$SK" claim sk $((t + 1000)) tokA)
sleep_until $((t + 2500))
b=$(drv -l 1000 -k -1000 "$SK" claim sk $((t + 1000)) tokB)
check "nats: clocks 2 s apart (within max_skew_ms 1000 either way): one winner ($a, $b)" test "$a:$b" = "won:lost"
t=$(mq_now)
a=$(drv -l 1000 -k 4000 "$SK" claim sk $((t + 4000)) tokA)
sleep_until $((t + 7000))
b=$(drv -l 1000 -k -4000 "$SK" claim sk $((t + 4000)) tokB)
check "nats: clocks 8 s apart (past max_skew_ms): the second claim comes after the window and wins too, as doc/stores-amqp-nats.md warns ($a, $b)" \
	test "$a:$b" = "won:won"

# The same through the SQLite host, each instance's clock moved with
# faketime (libfaketime: the process reads a clock that far off, as on a
# host whose time service is broken).  Slots are whole seconds here.
# fclaim OFFSET SLOT TOKEN: claim on stream SKEW from a process whose clock is OFFSET off.
fclaim() {
	FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f "$1" sqlite3 -batch :memory: ".load $REPO_ROOT/sqlite/anarchon" \
		".output /dev/null" "SELECT anarchon_config('max_late_ms', 1000);" "SELECT anarchon_config('store', '$SK');" \
		".output stdout" "SELECT anarchon_claim('skf', $2, '$3');" 2>&1
}
# skew_pair OFFSET_A AT_A OFFSET_B AT_B: A claims slot FS at FS + AT_A (real
# time) from a clock OFFSET_A off, then B at FS + AT_B from a clock OFFSET_B
# off; sets a and b.  A's claim is the scenario's set-up, due the moment its
# own clock reaches the slot: a process that takes longer than max_late_ms
# (1 s) to start on a loaded machine answers late, and then nothing was set
# up (Debian sid's lane, once).  Such a pair is tried again on a new slot, up
# to 3 times; B's answer is judged only after an A that was not late.
skew_pair() {
	local try
	for try in 1 2 3; do
		FS=$(( ($(date +%s) + 6) * 1000 ))
		sleep_until $((FS + $2)); a=$(fclaim "$1" "$FS" tokA)
		[ "$a" = late ] || break
	done
	sleep_until $((FS + $4)); b=$(fclaim "$3" "$FS" tokB)
}
skew_pair +1s -1000 -1s 1500
check "nats/sqlite: faketime clocks 2 s apart (within max_skew_ms 1000 either way): one winner ($a, $b)" test "$a:$b" = "won:lost"
skew_pair +4s -4000 -4s 3000
check "nats/sqlite: faketime clocks 8 s apart (past max_skew_ms): a second winner, which the memory check exists to prevent ($a, $b)" \
	test "$a:$b" = "won:won"
expect_match "nats: an existing stream that does not take <prefix>.> is refused" \
	'^error config: NATS stream EXISTING exists but does not take the subjects cron.>' \
	drv "$U?stream=EXISTING" claim sync "$S" tokA
# One place decides (doc/stores-amqp-nats.md): a prefix's claims are decided in
# the one stream that takes <prefix>.>.  JetStream refuses a second stream
# over the same subjects, so a store naming another stream= for the prefix is
# refused with the stream that decides; the URL's duplicate_window_ms only
# sets up a stream anarchon creates, so a store with another one still
# decides in the same stream, by that stream's own window.
P=$(mq_now)
expect "nats: one place decides: a claim in stream CRON wins" won drv "$U" claim places "$P" tokA
expect_match "nats: ... a store naming another stream for prefix cron is refused, naming CRON (the server refuses overlapping subjects)" \
	'^error config: NATS stream SECOND cannot take the subjects cron\.>: stream CRON takes them, so the claims of prefix cron are decided there' \
	drv "$U?stream=SECOND" claim places "$P" tokB
expect_match "nats: ... and no stream SECOND was created" '"err_code":10059' nats_api main '$JS.API.STREAM.INFO.SECOND' ''
expect_match "nats: ... the server refuses a stream over a single job's subject too" '"err_code":10065' \
	nats_api main '$JS.API.STREAM.CREATE.THIRD' '{"name":"THIRD","subjects":["cron.places.claims"],"storage":"file"}'
expect "nats: ... a store with another duplicate_window_ms decides in the same stream (lost)" lost \
	drv "$U?duplicate_window_ms=600000" claim places "$P" tokB
expect_match "nats: ... by the stream's own window (120 s), not the URL's" \
	'^error config: the duplicate window of the NATS stream CRON \(120000 ms\) is shorter than max_late_ms \(300000 ms\)' \
	drv -l 300000 "$U?duplicate_window_ms=900000" claim places "$P" tokB
# Contention across those settings: one winner per slot.
d=$MQ_TMP/contend.places
mkdir -p "$d"
P=$(mq_now)
pids=()
for i in 1 2 3 4; do
	for q in "" "?duplicate_window_ms=600000" "?stream=CRON&timeout_ms=3000"; do
		"$DRV" "$U$q" contend places "$P" 50 > "$d/$i${q:+-${#q}}.out" 2>&1 &
		pids+=($!)
	done
done
wait "${pids[@]}"
mq_count_winners "nats: one place decides: 12 processes with three URLs for one stream" "$d" 12 50

# A stream in memory forgets every claim when the server stops or crashes
# (the restarts below forget it too: mem_stream makes it again before use).
mem_stream() { nats_api main '$JS.API.STREAM.CREATE.MEM' '{"name":"MEM","subjects":["mem.>"],"storage":"memory","duplicate_window":120000000000}' > /dev/null; }
mem_stream
expect_match "nats: a stream on memory storage is refused, saying why" \
	'^error config: NATS stream MEM keeps its messages in memory \(storage memory\): a restart or crash of the server forgets every claim' \
	drv "$U?stream=MEM&prefix=mem" claim sync "$(mq_now)" tokA
expect "nats: ... accepted with durability=accept-loss" won drv "$U?stream=MEM&prefix=mem&durability=accept-loss" claim sync "$(mq_now)" tokA
expect_match "nats: another durability value is refused, naming both" 'durability must be crash-safe \(the default\) or accept-loss' \
	drv "$U?durability=yes" validate
expect_match "nats: an unknown URL parameter is refused, naming the known ones" \
	'^error config: store URL parameter "strategy" is not known to nats stores: the parameters are stream, prefix, duplicate_window_ms, timeout_ms, durability' \
	drv "$U?strategy=lease" validate
expect_match "nats: a stream name with '.' is refused" '^error config: NATS store URL parameter stream must be' drv "$U?stream=a.b" validate
expect_match "nats: timeout_ms must be a number" '^error config: store URL parameter timeout_ms must be a whole number' drv "$U?timeout_ms=soon" validate
expect_match "nats: a server that is not there is a connect error" '^error connect: could not connect to NATS at nats://127.0.0.1:1' drv "nats://127.0.0.1:1" validate

NATS_PORT[nojs]=$(free_port)
nats-server -a 127.0.0.1 -p "${NATS_PORT[nojs]}" > "$MQ_TMP/nojs.log" 2>&1 &
NATS_PID[nojs]=$!
disown "${NATS_PID[nojs]}"
at_exit "nats_stop nojs"
wait_port "${NATS_PORT[nojs]}" 10
expect_match "nats: a server without JetStream is said to need -js" 'JetStream enabled \(-js\)' \
	drv "nats://127.0.0.1:${NATS_PORT[nojs]}" claim sync "$S" tokA
nats_stop nojs

nats_start auth --auth s3cr3t-tok
AU="127.0.0.1:${NATS_PORT[auth]}"
expect_match "nats: no token for a server that wants one is an auth error" '^error auth: NATS at nats://'"$AU"' refused the login: Authorization Violation' drv "nats://$AU" validate
expect_match "nats: a wrong token is an auth error" '^error auth: ' drv "nats://wrong-tok@$AU" validate
out=$(drv "nats://wrong-tok@$AU" validate 2>&1; drv "nats://s3cr3t-tok@$AU?bogus=1" validate 2>&1)
if printf '%s' "$out" | grep -q -e wrong-tok -e s3cr3t; then not_ok "nats: errors never show the token" "$out"; else ok "nats: errors never show the token"; fi
expect "nats: the right token is accepted" won drv "nats://s3cr3t-tok@$AU" claim sync "$S" tokA

# Credentials never go in clear off this machine: a token for a server that
# is not on loopback, without TLS, is refused before any socket is made.
# 192.0.2.1 is TEST-NET-1; strace proves no socket of the internet families
# was ever created, so nothing was sent anywhere.
if command -v strace > /dev/null; then
	out=$(strace -f -e trace=socket,connect -o "$MQ_TMP/plain.strace" "$DRV" "nats://s3cr3t-tok@192.0.2.1:4222" claim sync "$S" tokA 2>&1)
	if grep -q "would send its token in clear to 192.0.2.1, which is not a loopback address" <<< "$out" &&
		! grep -q -E 'socket\(AF_INET6?,|connect\(' "$MQ_TMP/plain.strace" &&
		! grep -q s3cr3t <<< "$out"; then
		ok "nats: a token in clear to a non-loopback address is refused before any socket, naming the rule"
	else
		not_ok "nats: a token in clear to a non-loopback address is refused before any socket" "$out" "$(grep -E 'socket|connect' "$MQ_TMP/plain.strace" | head -n 3)"
	fi
else
	not_ok "nats: a token in clear to a non-loopback address is refused before any socket" "strace is not installed"
fi
expect_match "nats: user and password in clear to a non-loopback address (a cluster's second server) are refused" \
	'would send its user and password in clear to 192.0.2.2' drv "nats://u:p@127.0.0.1:1,192.0.2.2:4222" validate
expect "nats: loopback stays allowed in clear, with plaintext_auth=true too" won drv "nats://s3cr3t-tok@$AU?plaintext_auth=true" claim plain "$S" tokB
expect_match "nats: plaintext_auth is true or false" 'plaintext_auth must be true or false' drv "nats://s3cr3t-tok@$AU?plaintext_auth=1" validate

# ---------------------------------------------------------------- contention
contend "nats: contention" "$U" race 16 300
contend "nats: contention on a job with '.'" "$U" race.dotted 16 300
C0=$(head -n 1 "$MQ_TMP/contend.race/1.out" | cut -d' ' -f1)
expect "nats: check finds runs among the 300 of a job, from any connection (first, middle, last, after)" "running
running
running
none" sh -c "for s in $C0 $((C0 + 137)) $((C0 + 299)) $((C0 + 300)); do '$DRV' '$U' check race \$s; done"

# ---------------------------------------------------------------- restart
R=$(mq_now)
coproc SESSION { "$DRV" "$U" session; }
session() { echo "$*" >&"${SESSION[1]}"; read -r -t 10 MQ_LINE <&"${SESSION[0]}"; echo "$MQ_LINE"; }
expect "nats: restart: a kept connection wins a slot before" won session claim rs "$R" t1
contend "nats: restart: before it" "$U" before 4 50
nats_restart main
expect "nats: restart: the same connection after it: another token loses that slot" lost session claim rs "$R" t2
expect "nats: restart: ... our own claim sent again still wins" won session claim rs "$R" t1
expect "nats: restart: ... a new slot wins" won session claim rs "$((R + 1))" t2
expect "nats: restart: a new connection: the slot is still taken" lost drv "$U" claim rs "$R" t3
mq_again "$U" before 4 50
expect "nats: restart: the 50 slots won before it are not won again by 4 new processes" 0 sh -c "cat '$MQ_TMP/again.before'/*.out | grep -c ' won$'"
contend "nats: SIGKILL: just before it" "$U" killed 2 30
nats_restart main KILL
expect "nats: SIGKILL and restart: the slot is still taken" lost drv "$U" claim rs "$R" t4
K0=$(head -n 1 "$MQ_TMP/contend.killed/1.out" | cut -d' ' -f1)
expect "nats: SIGKILL and restart: the 30 slots won just before it are not won again" "0 30" \
	sh -c "'$DRV' '$U' contend killed $K0 30 > '$MQ_TMP/killed.out'; echo \$(grep -c ' won$' '$MQ_TMP/killed.out') \$(grep -c ' lost$' '$MQ_TMP/killed.out')"

# ---------------------------------------------------------------- a frozen server
F=$(mq_now)
expect "nats: freeze: a kept connection wins a slot first" won session claim fz "$F" t0
# A second kept connection, told to claim once the server is frozen, then canceled.
mq_cancel_session "$U" "$F" 1.5 "$((F + 2))"
# A fixed wait, not a poll yet: the session's first claim answered before the freeze.
sleep 0.5
kill -STOP "${NATS_PID[main]}"
within "nats: freeze: a claim on a kept connection returns within timeout_ms (2 s) + 1.5 s" 3500 session claim fz "$((F + 1))" t1
expect_match "nats: freeze: ... with a timeout error" '^error timeout: NATS at .* did not answer the claim within timeout_ms \(2000 ms\)' echo "$MQ_OUT"
mq_freeze_new nats "$U" "$((F + 1))"
mq_freeze_cancel nats NATS
kill -CONT "${NATS_PID[main]}"
# The frozen claim of t1 may have been stored once the server woke up:
# whichever it was, exactly one of t1 (resending) and t3 wins.
sleep 0.5
mq_one_winner "nats: freeze: after it, exactly one of two tokens wins the frozen slot" "$U" "$((F + 1))" t3 t1
expect "nats: freeze: the kept connection works again" won session claim fz "$((F + 3))" t1
exec {SESSION[1]}>&-

# ---------------------------------------------------------------- memory
S=$(mq_now)
printf '%s\n' "claim vg $S t1" "claim vg $S t2" "claim vg $S t1" "heartbeat vg $S t1" "finish vg $S t1" "check vg $S" \
	"check vg $((S + 1))" "claim vg $((S - 61000)) t1" > "$MQ_TMP/vg.in"
expect "nats: valgrind: no memory errors or definite leaks in a session" "won
lost
won
true
true
succeeded
none
late
rc=0" mq_vg "$U" "$MQ_TMP/vg.in"
printf '%s\n' "claim places $S t1" "check places $S" > "$MQ_TMP/vg-overlap.in"
out=$(mq_vg "$U?stream=SECOND" "$MQ_TMP/vg-overlap.in")
if [ "$(printf '%s\n' "$out" | grep -c '^error config: NATS stream SECOND cannot take the subjects cron\.>: stream CRON takes them')" = 2 ] &&
	[ "$(printf '%s\n' "$out" | tail -n 1)" = rc=0 ]; then
	ok "nats: valgrind: no memory errors or definite leaks when a second stream over the prefix is refused"
else not_ok "nats: valgrind: no memory errors or definite leaks when a second stream over the prefix is refused" "$out" "$(tail -n 20 "$MQ_TMP/vg.err")"; fi

# ---------------------------------------------------------------- through SQLite
S=$(mq_slot_now)
expect "nats/sqlite: won, lost, our own again, late" "won
lost
won
late" sq "$U" "SELECT anarchon_claim('sq', $S, 'tokA');" "SELECT anarchon_claim('sq', $S, 'tokB');" \
	"SELECT anarchon_claim('sq', $S, 'tokA');" "SELECT anarchon_claim('sq', $((S - 61000)), 'tokA');"
expect "nats/sqlite: heartbeat, check, finish, check" "1
0
running
1
succeeded" sq "$U" "SELECT anarchon_heartbeat('sq', $S, 'tokA');" "SELECT anarchon_heartbeat('sq', $S, 'tokB');" \
	"SELECT anarchon_check('sq', $S);" "SELECT anarchon_finish('sq', $S, 'tokA');" "SELECT anarchon_check('sq', $S);"
expect_match "nats/sqlite: max_late_ms longer than the duplicate window is refused" \
	'anarchon_claim: the duplicate window of the NATS stream CRON \(120000 ms\) is shorter than max_late_ms \(300000 ms\)' \
	sq "$U" "SELECT anarchon_config('max_late_ms', '300000');" "SELECT anarchon_claim('sq', $S, 'tokA');"
expect_match "nats/sqlite: a bad URL is refused when set" 'is not known to nats stores' sq "$U?foo=1" "SELECT anarchon_claim('sq', $S, 'tokA');"
mem_stream
expect_match "nats/sqlite: a stream on memory storage is refused, with the hint" \
	'anarchon_claim: NATS stream MEM keeps its messages in memory .*\. Use a stream with file storage .*durability=accept-loss' \
	sq "$U?stream=MEM&prefix=mem" "SELECT anarchon_claim('sq', $S, 'tokA');"
# replicas=3 (doc/clusters.md) tried on one server that is not in a cluster:
# JetStream's own words come through as written ("replicas > 1", which its
# JSON escapes as \u003e), and the hint says what to change.
expect_match "nats: replicas=3 on a server outside a cluster says JetStream's words and what to do" \
	'anarchon_claim: NATS at .* refused the stream set-up: replicas > 1 not supported in non-clustered mode \(error 10074\)\. replicas=3 needs a JetStream cluster of at least 3 servers.*lower replicas=' \
	sq "$U?stream=REPL3&prefix=repl3&replicas=3" "SELECT anarchon_claim('sq', $S, 'tokA');"
mq_sqlite_contend nats "$U"

# ---------------------------------------------------------------- through PostgreSQL
mq_pg nats "$U?timeout_ms=20000" "" "" "$U?stream=PGSHORT&duplicate_window_ms=5000" "${NATS_PID[main]}" won
if [ -n "${PGPORT:-}" ]; then
	# The token is a secret: it lives in a user mapping (a lone password).
	pq -c "CREATE SERVER js_auth FOREIGN DATA WRAPPER anarchon OPTIONS (url 'nats://$AU')" \
		-c "CREATE USER MAPPING FOR PUBLIC SERVER js_auth OPTIONS (password 's3cr3t-tok')" > /dev/null
	S=$(mq_slot_now)
	expect "nats/pg: the token from the user mapping is accepted" won \
		env PGOPTIONS="-c anarchon.store=js_auth" psql -X -A -t -q -c "SELECT anarchon_claim('pgtok', ${S}::bigint, 'tokA')"
	pq -c "ALTER USER MAPPING FOR PUBLIC SERVER js_auth OPTIONS (SET password 'wr0ng-tok')" > /dev/null
	out=$(PGOPTIONS="-c anarchon.store=js_auth" psql -X -A -t -q -c "SELECT anarchon_claim('pgtok', ${S}::bigint, 'tokA')" 2>&1)
	if printf '%s' "$out" | grep -q 'refused the login: Authorization Violation' && ! printf '%s' "$out" | grep -q -e wr0ng -e s3cr3t; then
		ok "nats/pg: a wrong token in the user mapping is refused, without showing it"
	else not_ok "nats/pg: a wrong token in the user mapping is refused, without showing it" "$out"; fi
	pq -c "CREATE SERVER js_mem FOREIGN DATA WRAPPER anarchon OPTIONS (url '$U?stream=MEM&prefix=mem')" > /dev/null
	mem_stream
	out=$(PGOPTIONS="-c anarchon.store=js_mem" psql -X -A -t -q -c "SELECT anarchon_claim('pgmem', ${S}::bigint, 'tokA')" 2>&1)
	if printf '%s' "$out" | grep -q '^ERROR: .*NATS stream MEM keeps its messages in memory' &&
		printf '%s' "$out" | grep -q '^HINT: .*durability=accept-loss'; then ok "nats/pg: a stream on memory storage is refused, with a HINT"
	else not_ok "nats/pg: a stream on memory storage is refused, with a HINT" "$out"; fi
fi
nats_stop auth

suite_end
