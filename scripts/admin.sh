#!/bin/sh
# voice-agent-admin, the package's `bin`: runs the operator CLI (scripts/admin.ts) with the
# package's own Node 24 and tsx, from the package root, as `npm run admin` does, so .data/
# and the settings resolve the same way wherever it is called from.
set -e

# Follow symlinks (node_modules/.bin/voice-agent-admin, a global install) to the real script.
script=$0
while [ -L "$script" ]; do
  target=$(readlink "$script")
  case $target in
    /*) script=$target ;;
    *) script=$(dirname "$script")/$target ;;
  esac
done
root=$(cd "$(dirname "$script")/.." && pwd -P)

node="$root/node_modules/.bin/node"
if [ ! -x "$node" ]; then
  echo "voice-agent-admin: $node not found; run npm ci in $root" >&2
  exit 1
fi
cd "$root"
exec "$node" --import tsx scripts/admin.ts "$@"
