#!/usr/bin/env bash
# Installs the Debian packages the test suite needs when they are missing: what builds run (through
# src/setup/build-tools.sh, as `npm start` does), a PostgreSQL server (the suite starts a throwaway
# cluster on 127.0.0.1), iproute2 for the test host that serves git (a network namespace),
# Chromium's headless shell for the browser tests (driven by playwright-core;
# docs/design/test-suite.md says why the shell), Ceph's radosgw for a real S3 server
# (test/setup/s3.ts), the Read the Docs theme, Furo and Material for MkDocs
# (test/serve/themes.test.ts builds with them), python3-doc, whose HTML the upload and search
# tests publish, and openssl, which makes the certificate of the SMTP server in
# test/notifications/email.test.ts. Runs before `npm test`.
set -euo pipefail
exec bash "$(dirname "$0")/../../src/setup/build-tools.sh" \
  '/usr/lib/postgresql/*/bin/initdb=postgresql' \
  /usr/share/doc/python3-doc/html/index.html=python3-doc \
  chromium-headless-shell=chromium-headless-shell \
  /usr/lib/python3/dist-packages/sphinx_rtd_theme/__init__.py=python3-sphinx-rtd-theme \
  /usr/lib/python3/dist-packages/furo/__init__.py=furo \
  /usr/share/mkdocs/themes/material/mkdocs_theme.yml=mkdocs-material \
  /usr/bin/openssl=openssl \
  ip=iproute2 \
  radosgw=radosgw,ceph-mon,ceph-osd \
  ceph-mon=radosgw,ceph-mon,ceph-osd \
  ceph-osd=radosgw,ceph-mon,ceph-osd
