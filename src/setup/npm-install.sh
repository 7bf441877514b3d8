#!/usr/bin/env bash
# The npm install that `npm start` and `npm test` run first. npm checks each package's `engines`
# against the Node that runs npm, which on a fresh clone is the machine's own (Debian's may be 18
# or 20), while Lectern and its dependencies run on the Node 24 that the npm package `node` puts
# in node_modules/.bin (README "Two commands"): there, and only there, npm's warnings are about a
# Node that never runs Lectern, so they are left out (errors still show). Once node_modules/.bin/node
# exists, npm scripts find it first on their PATH and this install runs on Node 24, warnings and all.
set -euo pipefail
quiet=()
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ] || quiet=(--loglevel=error)
npm install --no-audit --no-fund "${quiet[@]}"
# The `lectern` command beside node_modules/.bin's Node, for a shell with that directory on its PATH
# (README "Command line"): npm links the bins of dependencies there, not the project's own, and
# `npx lectern` spends about 1.4 s of npm's own finding it.
ln -sfn ../../src/bin.js node_modules/.bin/lectern
