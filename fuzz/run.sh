#!/usr/bin/env bash
# Fuzz rpcline with atheris on an extension built by clang for coverage.
#
# Two targets, each run in turn for --seconds: "rpcline" (fuzz/fuzz_rpcline.py: parse, route
# and StreamParser, seeds in fuzz/corpus/) and "sse" (fuzz/fuzz_sse.py: EventStreamParser
# fed whole and cut at points the input picks, core and twin, seeds in fuzz/corpus-sse/).
#
#   bash fuzz/run.sh                          # CI: 60 s each, seed 1, coverage build, no ASan
#   bash fuzz/run.sh --target sse             # one target only
#   bash fuzz/run.sh --long                   # a long run: AddressSanitizer, until stopped,
#                                             # new inputs kept in fuzz/work/corpus
#   bash fuzz/run.sh --long --seconds 3600 --jobs 2
#   bash fuzz/run.sh --merge                  # after long runs: add to fuzz/corpus the
#                                             # inputs of fuzz/work/corpus that bring coverage
#
# Options: --seconds N (0: no limit), --seed N, --asan, --long (= --asan --seconds 0 and a
# kept work corpus), --jobs N (libFuzzer -fork), --merge, --venv DIR (reuse a venv),
# --work DIR (where the work corpus and crash files go; default fuzz/work for --long and
# --merge), --target rpcline|sse, then any libFuzzer flags after "--".
#
# The extension is compiled with clang's -fsanitize=fuzzer-no-link (plus address with
# --asan) as atheris documents for native extensions; the twin's Python code is
# instrumented by atheris itself. libFuzzer's symbols must be global before the extension
# loads: with --asan the preload is atheris's asan_with_fuzzer.so; without, a libFuzzer
# linked from the archive atheris ships (preloading ASan's runtime into an uninstrumented
# Python costs 3-10x in executions). Without clang the run falls back to gcc: the Python
# twin is still covered, the Cython core is only checked, and the script says so.
# A crash or a disagreement stops the run and leaves the input in WORK/crashes/ (the sse
# target's in WORK/crashes-sse/); copy it into fuzz/regressions/ (an sse finding into
# fuzz/corpus-sse/): tests/test_fuzz_corpus.py replays both folders.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
SECONDS_LIMIT=60 SEED=1 ASAN=0 LONG=0 JOBS=0 MERGE=0 VENV="" WORK="" TARGETS="rpcline sse"
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) SECONDS_LIMIT=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --asan) ASAN=1; shift ;;
        --long) LONG=1; ASAN=1; SECONDS_LIMIT=0; shift ;;
        --jobs) JOBS=$2; shift 2 ;;
        --merge) MERGE=1; LONG=1; shift ;;
        --venv) VENV=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --target) TARGETS=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "unknown option $1 (see the comment at the top of $0)" >&2; exit 2 ;;
    esac
done
if [ -z "$WORK" ]; then
    if [ "$LONG" = 1 ]; then WORK=$ROOT/fuzz/work; else WORK=$(mktemp -d); fi
fi
mkdir -p "$WORK/corpus" "$WORK/crashes" "$WORK/corpus-sse" "$WORK/crashes-sse"
VENV=${VENV:-$WORK/venv}

if command -v clang >/dev/null 2>&1; then
    FLAGS="-fsanitize=fuzzer-no-link -g"
    [ "$ASAN" = 1 ] && FLAGS="-fsanitize=address,fuzzer-no-link -g -fno-omit-frame-pointer"
    # setup.py appends its release flags (-O3 -g0) after these: an optimised instrumented
    # build. (A RPCLINE_DEBUG_BUILD=1 fuzz build left http_c uninstrumented: not used.)
    BUILD_ENV=(CC=clang CXX=clang++ "LDSHARED=clang -shared" "CFLAGS=$FLAGS")
else
    echo "fuzz: clang not found: gcc build, no coverage from the Cython core" >&2
    [ "$ASAN" = 1 ] && { echo "fuzz: --asan needs clang" >&2; exit 1; }
    BUILD_ENV=()
fi
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
fi
# A fresh non-editable build every time (a reused venv too), from a copy of the checkout
# without build/ and generated C: pip builds in the tree, and setuptools would reuse an
# uninstrumented binary left there by an ordinary build (it knows nothing of CFLAGS).
rm -rf "$WORK/src" && mkdir -p "$WORK/src"
tar -C "$ROOT" --exclude=./.git --exclude=./build --exclude=./fuzz/work --exclude='*.so' \
    --exclude='./src/rpcline/_core/*.c' --exclude=./dist --exclude=./wheelhouse -cf - . \
    | tar -C "$WORK/src" -xf -
env "${BUILD_ENV[@]}" "$VENV/bin/python" -m pip install -q "$WORK/src[fuzz]"
env "${BUILD_ENV[@]}" "$VENV/bin/python" -m pip install -q --force-reinstall --no-deps "$WORK/src"
if [ ${#BUILD_ENV[@]} -gt 0 ]; then  # never fuzz an uninstrumented core believing otherwise
    modules=$("$VENV/bin/python" -c 'import glob, os, rpcline
print(*glob.glob(os.path.join(os.path.dirname(rpcline.__file__), "_core", "*_c*.so")))')
    [ -n "$modules" ] || { echo "fuzz: no compiled module found to check" >&2; exit 1; }
    for so in $modules; do
        nm -D "$so" | grep -q __sanitizer_cov || { echo "fuzz: $so is not instrumented" >&2; exit 1; }
    done
fi
ATHERIS=$("$VENV/bin/python" -c "import atheris; print(atheris.path())")

PRELOAD=""
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:malloc_context_size=10:allocator_may_return_null=1}
if [ "$ASAN" = 1 ]; then
    PRELOAD=$ATHERIS/asan_with_fuzzer.so
    export PYTHONMALLOC=malloc  # every object through ASan's allocator: use-after-free shows
elif [ ${#BUILD_ENV[@]} -gt 0 ]; then
    PRELOAD=$VENV/libfuzzer_no_main.so
    if [ ! -f "$PRELOAD" ]; then
        clang++ -shared -fPIC -o "$PRELOAD" -Wl,--whole-archive \
            "$ATHERIS/libclang_rt.fuzzer_no_main.a" -Wl,--no-whole-archive -lpthread
    fi
fi

# One target: its script, dictionary, seeds, and the work folders' suffix ("" or "-sse").
fuzz_target() {
    local name=$1 script=$2 dict=$3 seeds=$4 suffix=$5
    local corpus=$WORK/corpus$suffix crashes=$WORK/crashes$suffix log=$WORK/fuzz$suffix.log
    local args=(-seed="$SEED" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1
                -dict="$ROOT/fuzz/$dict" -artifact_prefix="$crashes/")
    [ "$SECONDS_LIMIT" != 0 ] && args+=(-max_total_time="$SECONDS_LIMIT")
    [ "$JOBS" != 0 ] && args+=(-fork="$JOBS" -ignore_crashes=0)
    # New inputs go to the first folder; the seeds and the regressions are read only. -fork
    # and -merge start the script itself again: it runs by its shebang, the venv first on PATH.
    local dirs=("$corpus" "$ROOT/fuzz/$seeds")
    [ "$name" = rpcline ] && dirs+=("$ROOT/fuzz/regressions")
    [ "$MERGE" = 1 ] && { args=(-merge=1 -timeout=20); dirs=("$ROOT/fuzz/$seeds" "$corpus"); }
    echo "fuzz $name: ${SECONDS_LIMIT}s (0: until stopped), seed $SEED, asan=$ASAN, merge=$MERGE, work $WORK"
    set +e
    ( cd "$WORK" && PATH="$VENV/bin:$PATH" env ${PRELOAD:+LD_PRELOAD="$PRELOAD"} \
        "$ROOT/fuzz/$script" "${args[@]}" "${EXTRA[@]}" "${dirs[@]}" ) >"$log" 2>&1
    local status=$?
    set -e
    if [ "$MERGE" = 1 ]; then
        grep MERGE-OUTER "$log" | tail -n 3
        return "$status"
    fi
    # libFuzzer's progress lines are many; the rest (set-up, findings, final stats) is shown.
    grep -vE '^#[0-9]+.*(NEW|REDUCE|pulse) |# Uses: ' "$log" | tail -n 80
    local found runs
    found=$(find "$crashes" -type f | wc -l)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    [ -n "$runs" ] || runs=$(sed -n 's/^#\([0-9]*\): cov.*/\1/p' "$log" | tail -n 1)  # -fork
    echo "fuzz $name: ${runs:-?} executions; $(find "$corpus" -type f | wc -l) new corpus inputs in $corpus," \
         "$(find "$ROOT/fuzz/$seeds" -type f | wc -l) seeds, $found findings"
    if [ "$found" -gt 0 ] || [ "$status" -ne 0 ]; then
        echo "fuzz $name: libFuzzer exited $status; log in $log" >&2
        for input in $(find "$crashes" -type f); do
            echo "fuzz $name: finding $input:"
            "$VENV/bin/python" -c 'import sys; print(repr(open(sys.argv[1], "rb").read()[:2000]))' "$input"
        done
        return 1
    fi
}

EXTRA=("$@")
failed=0
for target in $TARGETS; do
    case "$target" in
        rpcline) fuzz_target rpcline fuzz_rpcline.py jsonrpc.dict corpus "" || failed=1 ;;
        sse) fuzz_target sse fuzz_sse.py sse.dict corpus-sse -sse || failed=1 ;;
        *) echo "unknown target $target (rpcline, sse)" >&2; exit 2 ;;
    esac
done
exit "$failed"
