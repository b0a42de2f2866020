# Sourced by the bench/run_*_bench.sh scripts.
#
# measure LABEL COMMAND...  prints "LABEL  best-wall-s  peak-RSS-MiB" for
# COMMAND: one warm-up run, then 5 timed runs with /usr/bin/time; before each,
# the outputs $dir/out.* are deleted and `sync` flushes dirty pages, so that no
# run pays for the previous one's writeback or for freeing a replaced file.
# Needs $dir (the scratch directory) set by the caller.
measure() {
  local label=$1
  shift
  "$@" >/dev/null 2>&1 || { echo "$label: command failed: $*" >&2; return 1; }
  local best=999999 rss=0 wall kib
  for _ in 1 2 3 4 5; do
    rm -f "$dir"/out.*
    sync
    /usr/bin/time -f "%e %M" -o "$dir/time.out" "$@" >/dev/null 2>&1
    read -r wall kib < "$dir/time.out"
    best=$(awk -v a="$best" -v b="$wall" 'BEGIN{print (b<a)?b:a}')
    rss=$(( kib > rss ? kib : rss ))
  done
  printf "  %-44s %8.3f s %8.1f MiB peak RSS\n" "$label" "$best" \
    "$(awk -v k="$rss" 'BEGIN{print k/1024}')"
}
