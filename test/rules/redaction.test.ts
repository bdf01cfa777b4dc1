/**
 * The one URL redaction (issue 37): user information and every query value masked, everywhere a
 * URL is shown (messages, error fields, spans, status). Scheme, host, port, path, query keys and
 * fragment stay, so the reader still sees where.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { redactUrl, REDACTED } from '../../packages/core/src/rules/redaction.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { spanUrl } from '../../packages/core/src/telemetry/attributes.js';

test('userinfo and query values are masked; the rest stays', () => {
  assert.equal(redactUrl('https://u:p@x.example/a?key=1&b=2#f'), `https://${REDACTED}@x.example/a?key=${REDACTED}&b=${REDACTED}#f`);
  assert.equal(redactUrl('https://token@x.example/'), `https://${REDACTED}@x.example/`);
  assert.equal(redactUrl('postgres://a2a:s3cret@db.example.com/a2a'), `postgres://${REDACTED}@db.example.com/a2a`);
  assert.equal(redactUrl('https://agents.example.com:8443/v1/'), 'https://agents.example.com:8443/v1/');
  assert.equal(redactUrl(new URL('https://x.example/?api_key=abc')), `https://x.example/?api_key=${REDACTED}`);
});

test('text that is not a URL loses its userinfo-like and query parts too, and is bounded', () => {
  assert.equal(redactUrl('weird://a:b@c?d'), `weird://${REDACTED}@c?d=${REDACTED}`);
  // Unparseable because of the password itself (a `/` reads as the path, `se` as a port): masked up to the last `@`.
  for (const text of ['redis://user:se/cret@cache.example.com', 'redis://us:er:se/cr:et@cache.example.com']) {
    const shown = redactUrl(text);
    assert.ok(!/se\/cr/.test(shown) && shown.endsWith(`${REDACTED}@cache.example.com`), shown);
  }
  assert.ok(redactUrl(`not a url ${'x'.repeat(1_000)}`).length <= 200);
});

test('no secret survives: for any user, password and query value, none shows in the redacted URL', () => {
  const secret = fc.string({ minLength: 6, maxLength: 24, unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789') }).map((s) => `S3CR${s}`);
  fc.assert(
    fc.property(secret, secret, secret, (user, password, value) => {
      const shown = redactUrl(`https://${user}:${password}@agents.example.com/a?key=${value}&other=${value}`);
      return !shown.includes(user) && !shown.includes(password) && !shown.includes(value) && shown.includes('agents.example.com/a?key=');
    }),
  );
});

test('every place a URL is shown uses it: the allowlist refusal and the span attribute', () => {
  const policy = HostPolicy.from({ allow: ['https://agents.example.com'] });
  assert.throws(
    () => policy.normalizeBaseUrl('https://user:pw@other.example/?key=hunter2'),
    (err: Error) => !err.message.includes('hunter2') && !err.message.includes('pw@') && err.message.includes(`key=${REDACTED}`),
  );
  assert.equal(spanUrl('https://u:p@x.example/a?key=1#f'), `https://${REDACTED}@x.example/a?key=${REDACTED}`);
});
