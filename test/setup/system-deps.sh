#!/usr/bin/env bash
# Installs the Debian packages the test suite needs when they are missing: a PostgreSQL server
# (the suite starts a throwaway cluster on 127.0.0.1), git, the documentation tools builds run,
# bubblewrap, and Ceph's radosgw (S3). Runs before `npm test`.
set -euo pipefail
missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v git >/dev/null 2>&1 || missing+=(git)
# What builds run: Sphinx, MkDocs, Python virtual environments with pip, and bubblewrap for the sandbox.
[ -x /usr/bin/sphinx-build ] || missing+=(python3-sphinx)
command -v mkdocs >/dev/null 2>&1 || missing+=(mkdocs)
/usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
/usr/bin/python3 -c 'import setuptools' >/dev/null 2>&1 || missing+=(python3-setuptools)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
# A real browser for the docs server's switcher test (test/serve/browser.test.ts), driven by playwright-core.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# A real S3 server for test/storage (Ceph's radosgw on a one-node cluster: test/setup/s3.ts).
{ command -v radosgw && command -v ceph-mon && command -v ceph-osd; } >/dev/null 2>&1 || missing+=(radosgw ceph-mon ceph-osd)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "test setup: missing Debian packages: ${missing[*]}; install them (apt-get install -y ${missing[*]}) or run as root" >&2
  exit 0 # the tests that need them fail and say which
fi
echo "test setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
