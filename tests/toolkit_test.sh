#!/bin/sh
# The policy toolkit as an outside author sees it (docs/plugins.md, "Building
# on the toolkit"): install the project into an empty prefix, build
# docs/examples/memlist.c against that prefix only (its headers and
# libschedbench_policy.a, no source tree, no build tree), and run it with the
# installed schedbench.
#   toolkit_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "toolkit_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || fail "cmake --install failed"
p=$tmp/prefix
[ -f "$p/include/schedbench/policy.h" ] || fail "policy.h not installed"
lib=$(find "$p" -name libschedbench_policy.a | head -n 1)
[ -n "$lib" ] || fail "libschedbench_policy.a not installed"
libdir=$(dirname "$lib")

# the example, copied out of the tree, so nothing but the prefix is reachable
cp "$src/docs/examples/memlist.c" "$tmp/memlist.c"
$cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -DSB_BUILD_MODULE \
    -I"$p/include" "$tmp/memlist.c" -L"$libdir" -lschedbench_policy -lm \
    -o "$tmp/memlist.so" || fail "the example does not build against the prefix"

# The default limit (16 GB) and a limit of 1 byte, under which every choice
# is the least-allocating one: both must give valid schedules ("ok").
w=$p/share/schedbench/corpus/tiny-fsdp.csv
[ -f "$w" ] || fail "the installed corpus has no tiny-fsdp.csv"
cd "$tmp"
"$p/bin/schedbench" run --plugin "$tmp/memlist.so" -w "$w" \
    -s original,memlist,memlist:limit=1B --quiet -o "$tmp/r.csv" || fail "run failed"
n_ok=$(grep -c ',memlist[^,]*,ok,' "$tmp/r.csv" || true)
[ "$n_ok" = 2 ] || { cat "$tmp/r.csv" >&2; fail "expected 2 memlist rows with status ok, got $n_ok"; }
echo "toolkit_test: memlist built against $p and ran: ok"
