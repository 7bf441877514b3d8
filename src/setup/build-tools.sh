#!/usr/bin/env bash
# Installs the Debian packages a Lectern build runs, when they are missing: git, Python with venv,
# pip and setuptools, Sphinx, MkDocs, bubblewrap, slirp4netns and nftables for the sandbox, and
# mmdebstrap for build images. `npm start` runs it, and the
# test setup too; on a machine where it cannot install (not root) it says what to install instead.
# Usage: build-tools.sh [extra Debian packages to check by command: NAME=PACKAGE ...]
set -euo pipefail
missing=()
command -v git >/dev/null 2>&1 || missing+=(git)
[ -x /usr/bin/sphinx-build ] || missing+=(python3-sphinx)
command -v mkdocs >/dev/null 2>&1 || missing+=(mkdocs)
/usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
/usr/bin/python3 -c 'import setuptools' >/dev/null 2>&1 || missing+=(python3-setuptools)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
# The network of install steps: a user-mode TCP/IP stack in the sandbox's own network namespace,
# and a firewall there that keeps it off this machine and private ranges (README "Security model").
command -v slirp4netns >/dev/null 2>&1 || missing+=(slirp4netns)
[ -x /usr/sbin/nft ] || missing+=(nftables)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
# Build images (`lectern images build`, docs/design/images.md) are made with mmdebstrap.
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
# More packages the caller needs, named by the command that shows them installed.
for pair in "$@"; do
  cmd=${pair%%=*}
  pkgs=${pair#*=}
  if [[ $cmd == /* ]]; then ls $cmd >/dev/null 2>&1 || missing+=(${pkgs//,/ }); else command -v "$cmd" >/dev/null 2>&1 || missing+=(${pkgs//,/ }); fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" -ne 0 ]; then
  echo "lectern setup: missing Debian packages: ${missing[*]}; install them (apt-get install -y ${missing[*]}) or run as root" >&2
  exit 0 # builds (or the tests) that need them fail and say which
fi
echo "lectern setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
