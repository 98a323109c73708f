# contend.sh — many OS processes claim the same slots; exactly one wins each.
# (sourced by test/redis/run.sh)
PROCS=16
SLOTS=500

# contend NAME URL [rdrive options...]: PROCS processes, SLOTS slots, then count.
contend() {
	local name=$1 url=$2 first pids=() p out=$tmp/contend-$1
	shift 2
	first=$(now_ms)
	mkdir -p "$out"
	for p in $(seq 1 $PROCS); do
		"$RDRIVE" "$@" "$url" --contend sync "$first" "$SLOTS" > "$out/$p" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	# Per slot: the number of won, and every answer seen.
	cat "$out"/* | awk -v slots=$SLOTS -v procs=$PROCS -v first="$first" '
		{ i = $1 - first; n[i]++; if ($2 == "won") w[i]++; else if ($2 != "lost" && $2 != "running") bad[i] = $0 }
		END {
			for (s = 0; s < slots; s++) {
				if (w[s] != 1) { printf "slot first+%d: %d won\n", s, w[s]; err++ }
				if (n[s] != procs) { printf "slot first+%d: %d answers\n", s, n[s]; err++ }
				if (s in bad) { printf "slot first+%d: %s\n", s, bad[s]; err++ }
				if (err > 10) exit 1
			}
			exit err > 0
		}' > "$out.report"
	if [ $? -eq 0 ]; then ok "redis $name: $PROCS processes x $SLOTS slots, exactly one won per slot"
	else not_ok "redis $name: $PROCS processes x $SLOTS slots, exactly one won per slot" "$(head -n 10 "$out.report")"; fi
}

contend lease-contend "$URL?strategy=lease&prefix=c1" -s overlap=allow
contend stream-id-contend "$URL?strategy=stream-id&prefix=c2"
contend script-contend "$URL?strategy=script&prefix=c3"

# With overlap=skip, the winners never finish, so at most one slot may be won
# at a time in the whole run: every later slot sees the first one's live lease.
first=$(now_ms)
pids=()
for p in $(seq 1 $PROCS); do
	"$RDRIVE" "$URL?strategy=lease&prefix=c4" --contend sync "$first" 50 > "$tmp/contend-skip-$p" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
wins=$(cat "$tmp"/contend-skip-* | grep -c ' won$')
others=$(cat "$tmp"/contend-skip-* | grep -v -c -E ' (won|running|overlap)$')
if [ "$wins" = 1 ] && [ "$others" = 0 ]; then ok "redis lease-contend: overlap=skip lets one run hold the job"
else not_ok "redis lease-contend: overlap=skip lets one run hold the job" "won=$wins other answers=$others"; fi
