#!/usr/bin/env bash
# The Debian packages the test suite needs, installed when missing (as root on Debian), so that
# `npm test` passes on a fresh machine: openssl (self-signed certificates for the TLS tests) and
# chromium (the dashboard's browser tests, driven by playwright-core, which never downloads a
# browser of its own). Used by `npm test` (pretest) and by .ci/run.
set -euo pipefail
missing=()
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing test dependencies: ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
else
  echo "the tests need: ${missing[*]} (on Debian: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
