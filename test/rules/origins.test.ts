/**
 * One definition of loopback: `isLoopbackHost`, and every rule that relaxes something for
 * loopback hosts (the allowlist's `http:` exemption, the card's interface policy without a host
 * policy) answering exactly as it does. (The configuration's and the service's bind checks call
 * the same function.)
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopbackHost } from '../../packages/core/src/rules/origins.js';
import { parseAgentCard } from '../../packages/core/src/card/index.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { cardFor } from '../helpers/cards.js';

/** Host as written in a URL → loopback? */
const HOSTS: ReadonlyArray<[string, boolean]> = [
  ['localhost', true],
  ['LOCALHOST', true],
  ['localhost.', true],
  ['127.0.0.1', true],
  ['127.9.9.9', true],
  ['[::1]', true],
  ['[0:0:0:0:0:0:0:1]', true],
  // IPv4-mapped IPv6 of 127/8: a dual-stack socket reaches 127.0.0.1 through it.
  ['[::ffff:127.0.0.1]', true],
  ['[::ffff:7f00:1]', true],
  // RFC 6761 names under .localhost: Node's resolver may send them to DNS, so not loopback.
  ['foo.localhost', false],
  ['a.b.localhost', false],
  ['localhost.evil.test', false],
  ['evil-localhost', false],
  ['128.0.0.1', false],
  ['10.0.0.1', false],
  ['[::2]', false],
  // IPv4-compatible (deprecated) IPv6 is not loopback, and is blocked at connect time anyway.
  ['[::7f00:1]', false],
  ['[::ffff:10.0.0.1]', false],
];

describe('isLoopbackHost', () => {
  test('localhost, 127/8, ::1 and IPv4-mapped 127/8; never names under .localhost or look-alikes', () => {
    for (const [host, loopback] of HOSTS) assert.equal(isLoopbackHost(host), loopback, host);
    // Without brackets too, as a bind address is written.
    for (const host of ['::1', '::ffff:127.0.0.1', '::ffff:7f00:1']) assert.equal(isLoopbackHost(host), true, host);
    // Spellings that are not four decimal parts: `new URL()` rewrites them before anyone asks.
    for (const host of ['127.1', '0x7f000001', '2130706433', '']) assert.equal(isLoopbackHost(host), false, host);
  });

  test('the allowlist and the card interface policy give the same loopback answer for every host', () => {
    const policy = HostPolicy.from({ allow: [], allowLoopback: true });
    for (const [host, loopback] of HOSTS) {
      const url = `http://${host}:8080/a2a`;
      // The allowlist: http: passes the scheme rule only for loopback hosts (then fails on the empty list).
      const verdict = policy.check(url);
      assert.equal(verdict.allowed, false);
      assert.equal(!verdict.allowed && verdict.code, loopback ? 'ERR_HOST_NOT_ALLOWED' : 'ERR_INSECURE_URL', `allowlist, ${host}`);
      // The interface policy without a host policy: an http: interface only on a loopback host.
      const card = cardFor({ origin: `http://${host}:8080` }, 'dev');
      const parsed = parseAgentCard(JSON.stringify(card), { allowLoopback: true });
      assert.equal(parsed.ok, loopback, `interface policy, ${host}: ${JSON.stringify(parsed.problems)}`);
      if (!loopback) assert.equal(parsed.code, 'ERR_INSECURE_INTERFACE', host);
    }
  });

});
