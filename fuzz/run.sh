#!/usr/bin/env bash
# Fuzz rpcline with atheris on an extension built by clang for coverage.
#
#   bash fuzz/run.sh                          # CI: 60 s, seed 1, coverage build, no ASan
#   bash fuzz/run.sh --long                   # a long run: AddressSanitizer, until stopped,
#                                             # new inputs kept in fuzz/work/corpus
#   bash fuzz/run.sh --long --seconds 3600 --jobs 2
#   bash fuzz/run.sh --merge                  # after long runs: add to fuzz/corpus the
#                                             # inputs of fuzz/work/corpus that bring coverage
#
# Options: --seconds N (0: no limit), --seed N, --asan, --long (= --asan --seconds 0 and a
# kept work corpus), --jobs N (libFuzzer -fork), --merge, --venv DIR (reuse a venv),
# --work DIR (where the work corpus and crash files go; default fuzz/work for --long and
# --merge), then any libFuzzer flags after "--".
#
# The extension is compiled with clang's -fsanitize=fuzzer-no-link (plus address with
# --asan) as atheris documents for native extensions; the twin's Python code is
# instrumented by atheris itself. libFuzzer's symbols must be global before the extension
# loads: with --asan the preload is atheris's asan_with_fuzzer.so; without, a libFuzzer
# linked from the archive atheris ships (preloading ASan's runtime into an uninstrumented
# Python costs 3-10x in executions). Without clang the run falls back to gcc: the Python
# twin is still covered, the Cython core is only checked, and the script says so.
# A crash or a disagreement stops the run and leaves the input in WORK/crashes/; copy it
# into fuzz/regressions/ (tests/test_fuzz_corpus.py replays that folder).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
SECONDS_LIMIT=60 SEED=1 ASAN=0 LONG=0 JOBS=0 MERGE=0 VENV="" WORK=""
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
        --) shift; break ;;
        *) echo "unknown option $1 (see the comment at the top of $0)" >&2; exit 2 ;;
    esac
done
if [ -z "$WORK" ]; then
    if [ "$LONG" = 1 ]; then WORK=$ROOT/fuzz/work; else WORK=$(mktemp -d); fi
fi
mkdir -p "$WORK/corpus" "$WORK/crashes"
VENV=${VENV:-$WORK/venv}

if command -v clang >/dev/null 2>&1; then
    FLAGS="-fsanitize=fuzzer-no-link -g"
    [ "$ASAN" = 1 ] && FLAGS="-fsanitize=address,fuzzer-no-link -g -fno-omit-frame-pointer"
    # RPCLINE_DEBUG_BUILD: setup.py's release flags (-O3 -g0) would come after these and drop
    # the debug info sanitizer reports need; the debug build adds assertions and bounds checks.
    BUILD_ENV=(CC=clang CXX=clang++ "LDSHARED=clang -shared" "CFLAGS=$FLAGS" RPCLINE_DEBUG_BUILD=1)
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
    --exclude='./src/rpcline/*.c' --exclude=./dist --exclude=./wheelhouse -cf - . \
    | tar -C "$WORK/src" -xf -
env "${BUILD_ENV[@]}" "$VENV/bin/python" -m pip install -q "$WORK/src[fuzz]"
env "${BUILD_ENV[@]}" "$VENV/bin/python" -m pip install -q --force-reinstall --no-deps "$WORK/src"
if [ ${#BUILD_ENV[@]} -gt 0 ]; then  # never fuzz an uninstrumented core believing otherwise
    for so in $("$VENV/bin/python" -c 'import glob, os, rpcline
print(*glob.glob(os.path.join(os.path.dirname(rpcline.__file__), "_*_c*.so")))'); do
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

ARGS=(-seed="$SEED" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1
      -dict="$ROOT/fuzz/jsonrpc.dict" -artifact_prefix="$WORK/crashes/")
[ "$SECONDS_LIMIT" != 0 ] && ARGS+=(-max_total_time="$SECONDS_LIMIT")
[ "$JOBS" != 0 ] && ARGS+=(-fork="$JOBS" -ignore_crashes=0)
# New inputs go to the first folder; the seeds and the regressions are read only. -fork
# and -merge start the script itself again: it runs by its shebang, the venv first on PATH.
DIRS=("$WORK/corpus" "$ROOT/fuzz/corpus" "$ROOT/fuzz/regressions")
[ "$MERGE" = 1 ] && { ARGS=(-merge=1 -timeout=20); DIRS=("$ROOT/fuzz/corpus" "$WORK/corpus"); }
echo "fuzz: ${SECONDS_LIMIT}s (0: until stopped), seed $SEED, asan=$ASAN, merge=$MERGE, work $WORK"
set +e
( cd "$WORK" && PATH="$VENV/bin:$PATH" env ${PRELOAD:+LD_PRELOAD="$PRELOAD"} \
    "$ROOT/fuzz/fuzz_rpcline.py" "${ARGS[@]}" "$@" "${DIRS[@]}" ) >"$WORK/fuzz.log" 2>&1
status=$?
set -e
if [ "$MERGE" = 1 ]; then
    grep MERGE-OUTER "$WORK/fuzz.log" | tail -n 3
    exit "$status"
fi
# libFuzzer's progress lines are many; the rest (set-up, findings, final stats) is shown.
grep -vE '^#[0-9]+.*(NEW|REDUCE|pulse) |# Uses: ' "$WORK/fuzz.log" | tail -n 80
found=$(find "$WORK/crashes" -type f | wc -l)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/fuzz.log" | tail -n 1)
[ -n "$runs" ] || runs=$(sed -n 's/^#\([0-9]*\): cov.*/\1/p' "$WORK/fuzz.log" | tail -n 1)  # -fork
echo "fuzz: ${runs:-?} executions; $(find "$WORK/corpus" -type f | wc -l) new corpus inputs in $WORK/corpus," \
     "$(find "$ROOT/fuzz/corpus" -type f | wc -l) seeds, $found findings"
if [ "$found" -gt 0 ] || [ "$status" -ne 0 ]; then
    echo "fuzz: libFuzzer exited $status; log in $WORK/fuzz.log" >&2
    for input in $(find "$WORK/crashes" -type f); do
        echo "fuzz: finding $input:"
        "$VENV/bin/python" -c 'import sys; print(repr(open(sys.argv[1], "rb").read()[:2000]))' "$input"
    done
    exit 1
fi
exit 0
