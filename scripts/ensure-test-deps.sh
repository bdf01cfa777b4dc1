#!/usr/bin/env bash
# The Debian packages the test suite needs, installed when missing (as root on Debian), so that
# `npm test` passes on a fresh machine: openssl (self-signed certificates for the TLS tests),
# chromium (the dashboard's browser tests, driven by playwright-core, which never downloads a
# browser of its own) and postgresql (the state-store suites run against a real PostgreSQL, which
# test/helpers/postgres.ts initialises as a non-root user in a temporary directory; the package's
# own cluster service is not used), python3 (the ARD specification's conformance tool, run
# against the registry API), knot (an authoritative DNS server: the DNS source's tests serve DNS-AID
# and DNS-SD zones from it on a loopback port, test/helpers/dns-server.ts), knot-dnsutils (kdig) and
# unbound (a validating resolver for the DNSSEC cases). Used by `npm test` (pretest) and by .ci/run. First, the interop
# matrix's separately installed frameworks (below).
set -euo pipefail

# The interop matrix's frameworks that cannot share the root install (test-frameworks/<name>/:
# BeeAI Framework, Strands Agents, VoltAgent, the Mastra and reactive-agents clients; see docs/dependencies.md), each from its own committed
# package-lock.json, when not installed yet (npm writes node_modules/.package-lock.json last).
# Offline-friendly: npm's cache is used first; a failed install is reported, and the matrix test
# that needs it then says what is missing.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for dir in "$root"/test-frameworks/*/; do
  [ -f "$dir/package-lock.json" ] && [ ! -f "$dir/node_modules/.package-lock.json" ] || continue
  echo "installing the interop framework in ${dir#"$root"/}" >&2
  (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2) || echo "could not install ${dir#"$root"/} (offline?)" >&2
done

missing=()
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# python3: the ARD specification's own conformance tool (test/registry/conformance.test.ts).
command -v python3 >/dev/null 2>&1 || missing+=(python3)
[ -x /usr/bin/chromium ] || missing+=(chromium)
# DNS: knotd serves the test zones, unbound validates the signed one (their services are not started).
[ -x /usr/sbin/knotd ] || missing+=(knot)
command -v kdig >/dev/null 2>&1 || missing+=(knot-dnsutils)
[ -x /usr/sbin/unbound ] || missing+=(unbound)
# initdb, pg_ctl and postgres: Debian puts them in /usr/lib/postgresql/<major>/bin.
pg_found=""
for d in "${A2A_TEST_PG_BIN:-}" /usr/lib/postgresql/*/bin /usr/local/bin; do
  [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && pg_found=1 && break
done
[ -n "$pg_found" ] || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing test dependencies: ${missing[*]}" >&2
  apt-get update -qq
  # policy-rc.d 101: install the binaries without starting the package's own cluster service.
  restore_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && restore_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  [ -z "$restore_policy" ] || rm -f /usr/sbin/policy-rc.d
else
  echo "the tests need: ${missing[*]} (on Debian: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
