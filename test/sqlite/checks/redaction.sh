# redaction.sh — a store URL's password (or NATS token) never shows: not in
# anarchon_config('store'), not in anarchon_stats, not in an error message,
# whatever it holds ('@', '/', '?', '#', '%', ':').  The redaction finds the
# end of the credentials by the URL parser's own rule (the last '@'), so the
# two cannot disagree.  Before that rule, redis://u:pa/ss@h was shown whole.
# Sourced by test/sqlite/run.sh (uses $tmp and test/lib.sh).

redaction() {
	local dir=$tmp/redaction url secret out bad=()
	mkdir -p "$dir"
	local -a cases=(
		"redis://user:pa/ss-S3CRET@127.0.0.1:1?strategy=lease|pa/ss-S3CRET"
		"redis://user:p?w-S3CRET@127.0.0.1:1|p?w-S3CRET"
		"redis://user:p#w-S3CRET@127.0.0.1:1|p#w-S3CRET"
		"redis://user:p@w-S3CRET@127.0.0.1:1|p@w-S3CRET"
		"redis://user:p%40w-S3CRET@127.0.0.1:1|p%40w-S3CRET"
		"redis://user:p:w-S3CRET@127.0.0.1:1|w-S3CRET"
		"amqp://guest:a/b?c#d-S3CRET@127.0.0.1:1/vh|a/b?c#d-S3CRET"
		"nats://tok/en?x#y-S3CRET@127.0.0.1:1|tok/en?x#y-S3CRET"
	)
	local c
	for c in "${cases[@]}"; do
		url=${c%|*}
		secret=${c##*|}
		out=$(printf '%s\n' ".load ./sqlite/anarchon" \
			"SELECT anarchon_config('store', '$url');" \
			"SELECT anarchon_config('store');" \
			"SELECT anarchon_claim('j', 4102444800000, 'a');" \
			"SELECT store FROM anarchon_stats;" | sqlite3 "$dir/db" 2>&1)
		[[ $out == *S3CRET* ]] && bad+=("$url: $(grep S3CRET <<< "$out" | head -n 2)")
		[[ $out == *'***@127.0.0.1:1'* ]] || bad+=("$url: not shown redacted: $out")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		ok "sqlite redaction: ${#cases[@]} URLs with '@', '/', '?', '#', '%' and ':' in their secrets, through config, stats and errors"
	else
		not_ok "sqlite redaction" "${bad[@]}"
	fi
}
redaction
