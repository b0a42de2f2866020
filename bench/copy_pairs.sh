#!/usr/bin/env bash
# Paired benchmark of the copy path: a copy-dominated `strip-state` against
# `cp` at one size, like with like (issue 10's goal: <= 1.1x):
#   strip-state --nofsync   vs  cp
#   strip-state (fsyncs)    vs  cp, then `sync FILE` (an fsync of the copy)
# and, with --methods, every bench/copy_path method against `cp` (the
# shifted copy the splice writer does after an edit, and the congruent one).
#
#   bench/copy_pairs.sh BUILD_DIR [--mib 2048] [--rounds 5] [--dirs "DIR..."]
#                       [--csv FILE] [--methods] [--pairs "A:B ..."] [--keep]
#                       [--before FLINKSTATE_BINARY] [--wait-quiet PCT [--wait-max S]]
#
# Labels: cp, cp+fsync, strip, strip-nofsync (BUILD_DIR's flinkstate),
# strip@before, strip-nofsync@before (the --before binary, e.g. one built from
# main, so that a change is measured against what it replaces in the same
# rounds), a bench/copy_path method with options after slashes:
# METHOD[/sN][/fsync][/fbM] (cfr, splice, bounce1m-spread, ...; /sN: N inserted
# bytes instead of copy_path's 3, /s0 congruent; /fsync; /fbM: --flush-behind
# M MiB). --before adds strip-nofsync@before:cp and strip@before:cp+fsync.
#
# --dirs: one scratch directory per file system to measure (default: the
# ext4 data directory /work/bench-data/copy-pairs, or $TMPDIR, and /dev/shm);
# a small-union `_metadata` of MIB MiB is generated in each (and removed at
# the end unless --keep). Per round every pair runs A then B, or B then A in
# even rounds, each run after its outputs were deleted and `sync` flushed all
# dirty pages, so that no run pays for another's write-back. The input stays in
# the page cache (warm, as when a user strips a file just written or read).
# Per run the CSV (default bench/results/copy_pairs.csv, appended) records
# wall (ns clock around GNU time), user and system seconds, and the 1-minute
# load average; the summary printed at the end (and by
# `bench/report.py --copy-pairs FILE`) gives per pair the median of the
# per-round ratios A/B of wall time and of user+system time, with min and max.
# The machine is shared: run it at a quiet moment and read the load column.
# --wait-quiet PCT waits before each pair until the CPUs were busy at most PCT
# percent over 2 s (/proc/stat; other users' builds), for up to --wait-max
# seconds (default 900; then it runs anyway); the busy share measured just
# before each run is in the CSV (busy_pct) either way.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
die() { echo "copy_pairs.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: bench/copy_pairs.sh BUILD_DIR [--mib N] [--rounds N] [--dirs \"DIR...\"] [--csv FILE] [--methods] [--pairs \"A:B ...\"] [--keep] [--before FLINKSTATE_BINARY]"
build="$(cd "$1" && pwd)" || die "no build directory $1"; shift
mib=2048; rounds=5; dirs=""; csv="$root/bench/results/copy_pairs.csv"; methods=0; keep=0; pairs=""
before=""; quiet=""; wait_max=900
while [ $# -gt 0 ]; do
  case "$1" in
    --mib) mib="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --dirs) dirs="$2"; shift 2 ;;
    --csv) csv="$2"; shift 2 ;;
    --methods) methods=1; shift ;;
    --pairs) pairs="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --wait-quiet) quiet="$2"; shift 2 ;;
    --wait-max) wait_max="$2"; shift 2 ;;
    --before) before="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done
if [ -z "$dirs" ]; then
  if [ -d /work ] && [ -w /work ]; then dirs=/work/bench-data/copy-pairs; else dirs="${TMPDIR:-/tmp}/flinkstate-copy-pairs"; fi
  [ -d /dev/shm ] && dirs="$dirs /dev/shm/flinkstate-copy-pairs"
fi
fs_bin="$build/tools/flinkstate"
gen="$build/tools/gen/flinkstate-gen-incident"
copyp="$build/bench/copy_path"
for x in "$fs_bin" "$gen" "$copyp"; do [ -x "$x" ] || die "no $x (build flinkstate_cli flinkstate_gen_incident copy_path)"; done
state=topic-partition-offset-states
if [ -z "$pairs" ]; then
  pairs="strip-nofsync:cp strip:cp+fsync"
  [ -n "$before" ] && pairs="$pairs strip-nofsync@before:cp strip@before:cp+fsync"
  [ "$methods" = 1 ] && for m in cfr bounce1m bounce1m-spread splice splice64k sendfile mmap8m; do
    pairs="$pairs $m:cp"
  done
  # 3 inserted bytes: the output 3 bytes past the input (4K aliasing);
  # 4093: 3 bytes behind it; 0: congruent
  [ "$methods" = 1 ] && for m in cfr splice bounce1m-spread; do
    pairs="$pairs $m/s4093:cp $m/s0:cp"
  done
fi
mkdir -p "$(dirname "$csv")"
[ -z "$before" ] || [ -x "$before" ] || die "no $before"
[ -s "$csv" ] || echo "date,fs,mib,bytes,round,pair,order,label,wall_s,user_s,sys_s,load1,busy_pct" > "$csv"

# The command of LABEL over input $f into the directory $o (array CMD).
command_for() {
  case "$1" in
    cp) CMD=(cp "$f" "$o/cp") ;;
    cp+fsync) CMD=(sh -c 'cp "$1" "$2" && sync "$2"' sh "$f" "$o/cp") ;;
    strip) CMD=("$fs_bin" strip-state --noprogress --state "$state" "$f" "$o/s") ;;
    strip-nofsync) CMD=("$fs_bin" strip-state --noprogress --nofsync --state "$state" "$f" "$o/s") ;;
    strip@before) CMD=("$before" strip-state --noprogress --state "$state" "$f" "$o/s") ;;
    strip-nofsync@before) CMD=("$before" strip-state --noprogress --nofsync --state "$state" "$f" "$o/s") ;;
    *) # a bench/copy_path method, options after slashes: METHOD[/sN][/fsync][/fbM]
      local parts; IFS=/ read -r -a parts <<< "$1"
      CMD=("$copyp" "${parts[0]}" "$f" "$o/c")
      local p
      for p in "${parts[@]:1}"; do
        case "$p" in
          s[0-9]*) CMD+=(--shift "${p#s}") ;;
          fsync) CMD+=(--fsync) ;;
          fb[0-9]*) CMD+=(--flush-behind "${p#fb}") ;;
          *) die "unknown option $p in label $1" ;;
        esac
      done ;;
  esac
}
load1() { cut -d' ' -f1 /proc/loadavg; }
# busy SECONDS: the percentage of CPU time not idle (nor waiting for I/O)
# over the next SECONDS, all CPUs.
busy() {
  local a b
  a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)
  sleep "$1"
  b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN{split(a,x," "); split(b,y," "); u=y[1]-x[1]; i=y[2]-x[2];
    printf "%.0f", (u + i > 0) ? 100 * u / (u + i) : 0}'
}
# Waits (with --wait-quiet) until the machine is quiet enough.
wait_quiet() {
  [ -n "$quiet" ] || return 0
  local waited=0 b
  while b=$(busy 2); [ "$b" -gt "$quiet" ]; do
    waited=$((waited + 2))
    if [ "$waited" -ge "$wait_max" ]; then
      echo "copy_pairs: still ${b}% busy after ${waited} s; running anyway" >&2; return 0
    fi
  done
}
tmp="$(mktemp)"; trap 'rm -f "$tmp"' EXIT
# run LABEL ROUND PAIR ORDER: one timed run, appended to the CSV.
run() {
  command_for "$1"
  rm -rf "${o:?}"/*; sync
  local l t0 t1 w u s b
  l=$(load1); b=$(busy 1)
  t0=$(date +%s%N)
  /usr/bin/time -f "%U %S %x" -o "$tmp" "${CMD[@]}" >/dev/null 2>"$tmp.err" || true
  t1=$(date +%s%N)
  read -r u s x < <(tail -1 "$tmp")
  [ "$x" = 0 ] || { cat "$tmp.err" >&2; rm -f "$tmp.err"; die "$1 failed (exit $x): ${CMD[*]}"; }
  w=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", (b - a) / 1e9}')
  echo "$(date -u +%FT%TZ),$fsname,$mib,$bytes,$2,$3,$4,$1,$w,$u,$s,$l,$b" >> "$csv"
  printf '  round %s %-32s %-16s %8s s  user %5s sys %5s  load %s busy %s%%\n' "$2" "$3" "$1" "$w" "$u" "$s" "$l" "$b" >&2
  rm -f "$tmp.err"
}

first=$(wc -l < "$csv")
for d in $dirs; do
  mkdir -p "$d"
  fsname=$(df -PT "$d" | awk 'NR==2{print $2}')
  avail=$(df -Pm "$d" | awk 'NR==2{print $4}')
  [ "$avail" -gt $((mib * 3 + 512)) ] || { echo "copy_pairs.sh: $d ($fsname) has too little room, skipped" >&2; continue; }
  f="$d/small-union-$mib._metadata"
  [ -s "$f" ] || "$gen" --out "$f" --shape small-union --target_size_mib "$mib" --version 4 >/dev/null
  bytes=$(stat -c %s "$f")
  o="$d/out"; mkdir -p "$o"
  echo "copy_pairs: $f ($fsname, $bytes bytes), $rounds rounds" >&2
  # Warm-up: the input into the page cache, every command once.
  cat "$f" > /dev/null
  for p in $pairs; do command_for "${p%%:*}"; "${CMD[@]}" >/dev/null; command_for "${p#*:}"; "${CMD[@]}" >/dev/null; done
  for r in $(seq "$rounds"); do
    for p in $pairs; do
      a="${p%%:*}"; b="${p#*:}"
      wait_quiet
      if [ $((r % 2)) = 1 ]; then run "$a" "$r" "$p" AB; run "$b" "$r" "$p" AB
      else run "$b" "$r" "$p" BA; run "$a" "$r" "$p" BA; fi
    done
  done
  rm -rf "${o:?}"
  [ "$keep" = 1 ] || rm -f "$f"
done
# The summary of this invocation's rows.
{ head -1 "$csv"; tail -n +$((first + 1)) "$csv"; } > "$tmp.rows"
"${FLINKSTATE_PYTHON:-/usr/bin/python3}" "$here/report.py" --copy-pairs "$tmp.rows"
rm -f "$tmp.rows"
