# batch.sh — a batch of claims (anarchon_claim_many through the SQLite
# extension) is sent ahead in one round trip, and answers what the single
# claim answers.  (sourced by test/redis/run.sh; the cluster's are in
# cluster.sh)
#
#   round trips  a process that claims 100 jobs at once reads no more from
#                Redis than one that claims 2: the server's read events
#                (INFO stats total_reads_processed) of the two differ by a
#                few, where one round trip per job would be 98 more
#   oracle       16 processes x 12 slots on 24 jobs, each slot claimed by a
#                random set of the jobs in a random order, half of the calls
#                claim_many and half one anarchon_claim per job: one won per
#                (job, slot), no error; then anarchon_claim, the oracle, with
#                each answer's own token: the winners' answer won (their own
#                claim), the others' what they said before

if ! make -s sqlite > "$tmp/batch-build" 2>&1 || ! command -v sqlite3 > /dev/null; then
	not_ok "redis batch: build the extension" "$(tail -n 20 "$tmp/batch-build")"
	return 0
fi
BEXT=$REPO_ROOT/sqlite/anarchon
b_reads() { redis-cli -p "$PORT" INFO stats | tr -d '\r' | awk -F: '$1 == "total_reads_processed" { print $2 }'; }

# b_many STRAT N SLOT: one sqlite3 process claims N fresh jobs at once; prints "reads won-rows"
b_many() {
	local strat=$1 n=$2 slot=$3 r0 r1 jobs won
	jobs=$(seq 1 "$n" | sed "s/^/\"b$n-/; s/$/\"/" | paste -sd, -)
	r0=$(b_reads)
	won=$(sqlite3 -batch :memory: ".load $BEXT" \
		"SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?strategy=$strat&prefix=bt-$strat') IS NULL;" \
		"SELECT count(*) FROM anarchon_claim_many('[$jobs]', $slot, 'tok') WHERE outcome = 'won';" 2>&1 | tail -n 1)
	r1=$(b_reads)
	# The INFO that read r0 is one read of r1's.
	echo "$((r1 - r0 - 1)) $won"
}

for strat in lease script stream-id; do
	slot=$(now_slot)
	read -r two two_won < <(b_many "$strat" 2 "$slot")
	read -r hundred hundred_won < <(b_many "$strat" 100 "$slot")
	step "redis batch $strat: reads of a process claiming 2 jobs: $two, 100 jobs: $hundred"
	same "redis batch $strat: 100 fresh jobs at once all won" 100 "$hundred_won"
	if [ -n "$two" ] && [ -n "$hundred" ] && [ "$two_won" = 2 ] && [ $((hundred - two)) -le 8 ]; then
		ok "redis batch $strat: 100 claims in one round trip ($hundred reads against $two for 2)"
	else
		not_ok "redis batch $strat: 100 claims in one round trip" "reads for 2 jobs: ${two:-none} (won ${two_won:-none}); for 100: ${hundred:-none}"
	fi
done

# --- oracle ------------------------------------------------------------------
for strat in lease script; do
	bdir=$tmp/batch-oracle-$strat
	mkdir -p "$bdir"
	burl="redis://127.0.0.1:$PORT?strategy=$strat&prefix=bo-$strat"
	first=$(( ($(date +%s) + 3600) * 1000 ))   # slots to come: never late
	bpids=()
	for p in $(seq 1 16); do
		{
			echo ".load $BEXT"
			echo ".output /dev/null"
			echo "SELECT anarchon_config('store', '$burl'), anarchon_config('overlap', 'allow');"
			echo ".output stdout"
			for s in $(seq 0 11); do
				slot=$((first + s * 1000))
				mapfile -t js < <(seq 1 24 | shuf -n $((RANDOM % 20 + 4)) | sed 's/^/o/')
				if [ $((RANDOM % 2)) = 0 ]; then
					all=$(printf '"%s",' "${js[@]}")
					echo "SELECT job || '|$slot|' || outcome || '|p$p' FROM anarchon_claim_many('[${all%,}]', $slot, 'p$p');"
				else
					for j in "${js[@]}"; do echo "SELECT '$j|$slot|' || anarchon_claim('$j', $slot, 'p$p') || '|p$p';"; done
				fi
			done
		} > "$bdir/in.$p"
	done
	for p in $(seq 1 16); do
		sqlite3 -batch :memory: < "$bdir/in.$p" > "$bdir/out.$p" 2>&1 &
		bpids+=($!)
	done
	for p in "${bpids[@]}"; do wait "$p"; done
	cat "$bdir"/out.* > "$bdir/rows"
	res=$(awk -F'|' 'NF != 4 || $3 == "error" { bad++; next }
		{ n++; if ($3 == "won") won[$1 "|" $2]++; seen[$1 "|" $2] = 1 }
		END { for (k in seen) { keys++; if (won[k] != 1) wrong++ }
			printf "%d %d %d %d\n", n, keys, wrong + 0, bad + 0 }' "$bdir/rows")
	read -r nrows nkeys nwrong nbad <<< "$res"
	step "redis batch oracle $strat: $nrows answers for $nkeys (job, slot)"
	same "redis batch oracle $strat: every line an answer, none an error" 0 "${nbad:-x}"
	same "redis batch oracle $strat: one won per (job, slot) of claim and claim_many together" 0 "${nwrong:-x}"
	if [ "${nkeys:-0}" -ge 200 ]; then ok "redis batch oracle $strat: $nkeys (job, slot) contended"
	else not_ok "redis batch oracle $strat: at least 200 (job, slot) contended" "${nkeys:-none}"; fi
	# The oracle: the single claim, sent again with each answer's own token.
	{
		echo ".load $BEXT"
		echo ".output /dev/null"
		echo "SELECT anarchon_config('store', '$burl'), anarchon_config('overlap', 'allow');"
		echo ".output stdout"
		awk -F'|' 'NF == 4 { printf "SELECT %s || \x27|\x27 || anarchon_claim(\x27%s\x27, %s, \x27%s\x27);\n", "\x27" $0 "\x27", $1, $2, $4 }' "$bdir/rows"
	} > "$bdir/oracle.sql"
	sqlite3 -batch :memory: < "$bdir/oracle.sql" > "$bdir/oracle.out" 2>&1
	differ=$(awk -F'|' 'NF != 5 || $3 != $5 { n++; if (n <= 3) ex = ex " " $0 } END { print n + 0, ex }' "$bdir/oracle.out")
	same "redis batch oracle $strat: anarchon_claim with each answer's token answers the same ($(wc -l < "$bdir/oracle.out") claims)" 0 "${differ%% *}"
	[ "${differ%% *}" = 0 ] || step "redis batch oracle $strat: differ:${differ#* }"
done

# --- a job that breaks its rule, and valgrind ----------------------------------
slot=$(now_slot)
out=$(sqlite3 -batch :memory: ".load $BEXT" \
	"SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?prefix=bt-bad') IS NULL;" \
	"SELECT job || ':' || outcome FROM anarchon_claim_many('[\"bx1\",\"bad job\",\"bx2\"]', $slot, 'tok');" 2>&1 | tr '\n' ' ')
same "redis batch: a job name that breaks its rule is its own row, the others are claimed" \
	"0 bad job:error bx1:won bx2:won " "$out"
same "redis batch: ... and nothing of it reached Redis" 0 "$(redis-cli -p "$PORT" KEYS 'bt-bad:{bad job}*' | grep -c .)"
{
	echo ".load $BEXT"
	echo "SELECT anarchon_config('store', 'redis://127.0.0.1:$PORT?prefix=bt-vg');"
	echo "SELECT count(*) FROM anarchon_claim_many('[\"v1\",\"v2\",\"bad job\",\"v3\"]', $slot, 'tokA');"
	echo "SELECT count(*) FROM anarchon_claim_many('[\"v1\",\"v2\",\"v3\",\"v4\"]', $slot, 'tokB');"
} > "$tmp/batch-vg.sql"
vg_ok "redis batch: valgrind: batches sent ahead and answered, a bad job among them" "$tmp/batch-vg.sql" \
	sqlite3 -batch :memory:

# --- the batch's replies lost ----------------------------------------------------
# A proxy in front of Redis passes every request on, but of the first write
# with ten script calls or more (the batch's claims) it drops the reply and
# the connection, after Redis has taken every claim.  Each claim is then sent
# again on a new connection with its own token: every job answers won (the
# claim found as the token's own), and Redis holds that token as the winner.
cat > "$tmp/batch-proxy.py" <<'PY'
import socket, sys, threading
listen, port = socket.socket(), int(sys.argv[1])
listen.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listen.bind(("127.0.0.1", 0)); listen.listen(8)
print(listen.getsockname()[1], flush=True)
state = {"dropped": False}
def serve(c):
    u = socket.create_connection(("127.0.0.1", port))
    while True:
        data = c.recv(65536)
        if not data:
            break
        big = data.count(b"EVALSHA") >= 10
        while big and not state["dropped"]:
            # the rest of the write, then the replies, which are dropped with the connection
            c.settimeout(0.3)
            try:
                more = c.recv(65536)
            except socket.timeout:
                more = b""
            u.sendall(data + more)
            u.settimeout(2)
            try:
                while u.recv(65536):
                    pass
            except socket.timeout:
                pass
            state["dropped"] = True
            print("dropped", len(data) + len(more), flush=True)
            c.close(); u.close()
            return
        u.sendall(data)
        u.settimeout(5)
        c.sendall(u.recv(65536))
    c.close(); u.close()
while True:
    c, _ = listen.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
coproc BPROXY { exec python3 "$tmp/batch-proxy.py" "$PORT"; }
bproxy_pid=$BPROXY_PID
read -r -t 10 bport <&"${BPROXY[0]}"
if [ -z "${bport:-}" ]; then
	not_ok "redis batch: lost replies: the proxy started"
else
	slot=$(now_slot)
	jobs=$(seq 1 100 | sed 's/^/"bl/; s/$/"/' | paste -sd, -)
	out=$(sqlite3 -batch :memory: ".load $BEXT" \
		"SELECT anarchon_config('store', 'redis://127.0.0.1:$bport?prefix=bt-lost&timeout_ms=5000') IS NULL;" \
		"SELECT group_concat(outcome || ':' || n, ' ') FROM (SELECT outcome, count(*) n FROM anarchon_claim_many('[$jobs]', $slot, 'tokL') GROUP BY 1);" 2>&1 | tail -n 1)
	same "redis batch: lost replies: every claim sent again answers won, its token's own" "won:100" "$out"
	owners=$(for j in $(seq 1 100); do redis-cli -p "$PORT" HGET "bt-lost:{bl$j}:run:$slot" token; done | sort | uniq -c | awk '{ print $2 ":" $1 }')
	same "redis batch: lost replies: Redis holds tokL as each job's winner" "tokL:100" "$owners"
	read -r -t 5 dropped dropped_bytes <&"${BPROXY[0]}"
	same "redis batch: lost replies: the proxy dropped the replies of the claims' write ($dropped_bytes bytes)" \
		dropped "${dropped:-}"
fi
kill "$bproxy_pid" 2> /dev/null; wait "$bproxy_pid" 2> /dev/null
