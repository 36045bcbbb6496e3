#!/usr/bin/env bash
# Bun and Deno for the test that serves `ue.fetch` behind Bun.serve and Deno.serve
# (packages/server/tests/http/other-runtimes.test.ts). Their official Linux binaries ship inside
# npm packages (@oven/bun-linux-*, @deno/linux-*-glibc), so no install script runs and nothing
# else is downloaded; they stay in the CI cache folder, where the test looks for them.
#   UEDITOR_CI_NODE_CACHE=/path .ci/runtimes.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bun_version=1.4.5
deno_version=2.9.6
cache="${UEDITOR_CI_NODE_CACHE:-${TMPDIR:-/tmp}/ueditor-ci-node}"
case "$(node -p 'process.arch')" in
  x64) bun_arch=x64 deno_arch=x64 ;;
  arm64) bun_arch=aarch64 deno_arch=arm64 ;;
  *) echo "no Bun or Deno binary for $(node -p 'process.arch')" >&2; exit 1 ;;
esac

# install <folder> <package@version> <binary inside the package> <version>
install() {
  local binary="$cache/$1/node_modules/$3"
  if ! { [ -x "$binary" ] && "$binary" --version | grep -qF "$4"; }; then
    rm -rf "${cache:?}/$1"
    npm install --prefix "$cache/$1" --no-save --no-package-lock --no-audit --no-fund --silent "$2"
  fi
  echo "== $("$binary" --version | head -n 1) ($2)"
}

install bun "@oven/bun-linux-$bun_arch@$bun_version" "@oven/bun-linux-$bun_arch/bin/bun" "$bun_version"
install deno "@deno/linux-$deno_arch-glibc@$deno_version" "@deno/linux-$deno_arch-glibc/deno" "$deno_version"
