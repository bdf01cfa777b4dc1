/**
 * The replicas' signatures (replica-auth.ts; issue 38, item 2), on a virtual clock: a request signed
 * with the shared key verifies once (a replay is refused), only within the timestamp window, only
 * for the method and path it was signed for, never under another key; a rotated key keeps the one
 * before accepted for the grace period only; the nonce set is bounded; the leader's answer signature
 * binds the request's nonce, the status and the body. And which leader URLs a follower sends to.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaderUrls, ReplicaAuth } from '../../packages/service/src/auth/replica-auth.js';

const KEY = 'k'.repeat(24) + '-replica-key-one';
const OTHER = 'o'.repeat(24) + '-replica-key-two';

function clock(start = 1_700_000_000_000) {
  const c = { t: start, wallNow: () => c.t };
  return c;
}

test('a signed request verifies once, for its method and path, as its replica', () => {
  const c = clock();
  const follower = new ReplicaAuth({ key: KEY, clock: c });
  const leader = new ReplicaAuth({ key: KEY, clock: c });
  const signed = follower.sign('GET', '/api/endpoints?x=1', 'replica-b:42')!;
  assert.match(signed.header, /^v1;replica=replica-b%3A42;ts=\d+;nonce=[A-Za-z0-9_-]+;sig=[A-Za-z0-9_-]{43}$/);
  assert.doesNotMatch(signed.header, new RegExp(KEY), 'the key itself is never sent');
  const ok = leader.verify(signed.header, 'GET', '/api/endpoints?x=1');
  assert.equal(ok.ok, true);
  assert.equal(ok.ok && ok.replica, 'replica-b:42');
  // The same header again: a replay.
  const replay = leader.verify(signed.header, 'GET', '/api/endpoints?x=1');
  assert.equal(replay.ok, false);
  assert.match(!replay.ok ? replay.reason : '', /nonce was seen before/);
  // Another path, query or method than signed for.
  const again = follower.sign('GET', '/api/endpoints', 'replica-b')!;
  for (const [method, path] of [['GET', '/api/sources'], ['GET', '/api/endpoints?x=2'], ['POST', '/api/endpoints']] as const) {
    const v = leader.verify(again.header, method, path);
    assert.equal(v.ok, false, `${method} ${path}`);
    assert.match(!v.ok ? v.reason : '', /does not verify/);
  }
  // A changed replica id breaks the signature too.
  assert.equal(leader.verify(again.header.replace('replica=replica-b', 'replica=replica-c'), 'GET', '/api/endpoints').ok, false);
  // Malformed headers.
  for (const h of ['', 'Bearer x', 'v1;replica=a;ts=1;nonce=short;sig=x']) assert.match((leader.verify(h, 'GET', '/api/endpoints') as { reason: string }).reason, /malformed/);
});

test('a wrong key is refused; without a key nothing is signed and nothing admitted', () => {
  const c = clock();
  const wrong = new ReplicaAuth({ key: OTHER, clock: c }).sign('GET', '/api/endpoints', 'b')!;
  const leader = new ReplicaAuth({ key: KEY, clock: c });
  const v = leader.verify(wrong.header, 'GET', '/api/endpoints');
  assert.equal(v.ok, false);
  assert.match(!v.ok ? v.reason : '', /does not verify with this replica’s key/);
  const none = new ReplicaAuth({ key: undefined, clock: c });
  assert.equal(none.configured, false);
  assert.equal(none.sign('GET', '/api/endpoints', 'b'), undefined);
  assert.match((none.verify(wrong.header, 'GET', '/api/endpoints') as { reason: string }).reason, /holds no replica key \(replica\.keyEnv or replica\.keyFile\)/);
});

test('the timestamp window: skew either way beyond replica.authWindowMs is refused', () => {
  const c = clock();
  const follower = new ReplicaAuth({ key: KEY, clock: c });
  const leader = new ReplicaAuth({ key: KEY, clock: c, authWindowMs: 30_000 });
  const old = follower.sign('GET', '/api/endpoints', 'b')!;
  c.t += 30_001;
  const late = leader.verify(old.header, 'GET', '/api/endpoints');
  assert.equal(late.ok, false);
  assert.match(!late.ok ? late.reason : '', /beyond replica\.authWindowMs \(30000 ms\)/);
  const future = follower.sign('GET', '/api/endpoints', 'b')!;
  c.t -= 30_001;
  assert.equal(leader.verify(future.header, 'GET', '/api/endpoints').ok, false);
  // Within the window, ahead or behind: accepted.
  c.t += 29_000;
  assert.equal(leader.verify(future.header, 'GET', '/api/endpoints').ok, true);
});

test('nonces are bounded by replica.maxNonces and forgotten once their window has passed', () => {
  const c = clock();
  const follower = new ReplicaAuth({ key: KEY, clock: c });
  const leader = new ReplicaAuth({ key: KEY, clock: c, maxNonces: 3, authWindowMs: 1_000 });
  for (let i = 0; i < 3; i++) assert.equal(leader.verify(follower.sign('GET', '/api/endpoints', 'b')!.header, 'GET', '/api/endpoints').ok, true);
  const full = leader.verify(follower.sign('GET', '/api/endpoints', 'b')!.header, 'GET', '/api/endpoints');
  assert.equal(full.ok, false);
  assert.match(!full.ok ? full.reason : '', /more than replica\.maxNonces \(3\)/);
  assert.equal(leader.nonces, 3);
  c.t += 1_001;
  assert.equal(leader.verify(follower.sign('GET', '/api/endpoints', 'b')!.header, 'GET', '/api/endpoints').ok, true);
  assert.equal(leader.nonces, 1, 'the expired ones were dropped');
});

test('a rotated key: the one before is accepted (and signed with) for replica.keyGraceMs only', () => {
  const c = clock();
  const leader = new ReplicaAuth({ key: KEY, clock: c, keyGraceMs: 60_000 });
  const follower = new ReplicaAuth({ key: KEY, clock: c, keyGraceMs: 60_000 });
  // The leader reloads first: a follower still on the old key is admitted.
  leader.rotate(OTHER);
  assert.equal(leader.verify(follower.sign('GET', '/api/sources', 'b')!.header, 'GET', '/api/sources').ok, true);
  // A follower that reloaded first signs with both: a leader still on the old key admits it, and its answer verifies.
  const oldLeader = new ReplicaAuth({ key: KEY, clock: c });
  follower.rotate(OTHER);
  const both = follower.sign('GET', '/api/sources', 'b')!;
  assert.equal(both.keys.length, 2);
  const v = oldLeader.verify(both.header, 'GET', '/api/sources');
  assert.equal(v.ok, true);
  const body = Buffer.from('{"sources":[]}');
  assert.equal(follower.verifyResponse(both, 200, body, oldLeader.signResponse(v.ok ? v.key : Buffer.alloc(0), both.nonce, 200, body)), true);
  // Rotating to the same key again changes nothing.
  follower.rotate(OTHER);
  assert.equal(follower.sign('GET', '/api/sources', 'b')!.keys.length, 2);
  // Past the grace period, the old key is neither accepted nor signed with.
  const beforeGrace = new ReplicaAuth({ key: KEY, clock: c }).sign('GET', '/api/sources', 'b')!;
  c.t += 60_001;
  assert.equal(follower.sign('GET', '/api/sources', 'b')!.keys.length, 1);
  const expired = leader.verify(new ReplicaAuth({ key: KEY, clock: c }).sign('GET', '/api/sources', 'b')!.header, 'GET', '/api/sources');
  assert.equal(expired.ok, false);
  assert.match(!expired.ok ? expired.reason : '', /does not verify/);
  assert.equal(leader.verify(beforeGrace.header, 'GET', '/api/sources').ok, false);
  // No key any more: nothing signed.
  leader.rotate(undefined);
  assert.equal(leader.configured, false);
});

test('the answer’s signature binds the request’s nonce, the status and the body', () => {
  const c = clock();
  const follower = new ReplicaAuth({ key: KEY, clock: c });
  const leader = new ReplicaAuth({ key: KEY, clock: c });
  const signed = follower.sign('GET', '/api/endpoints', 'b')!;
  const v = leader.verify(signed.header, 'GET', '/api/endpoints');
  assert.ok(v.ok);
  const body = Buffer.from('{"endpoints":[],"servedBy":"replica-a"}');
  const sig = leader.signResponse(v.key, v.nonce, 200, body);
  assert.equal(follower.verifyResponse(signed, 200, body, sig), true);
  assert.equal(follower.verifyResponse(signed, 200, Buffer.from('{"endpoints":[],"servedBy":"evil"}'), sig), false, 'another body');
  assert.equal(follower.verifyResponse(signed, 404, body, sig), false, 'another status');
  assert.equal(follower.verifyResponse(follower.sign('GET', '/api/endpoints', 'b')!, 200, body, sig), false, 'another request');
  assert.equal(follower.verifyResponse(signed, 200, body, null), false, 'no signature');
  assert.equal(follower.verifyResponse(signed, 200, body, 'v1;sig=garbage'), false);
  const forged = new ReplicaAuth({ key: OTHER, clock: c }).signResponse(Buffer.from(OTHER), signed.nonce, 200, body);
  assert.equal(follower.verifyResponse(signed, 200, body, forged), false, 'another key');
});

test('leader URLs: replica.leaderUrls by the allowlist’s rules, loopback only when unset', () => {
  const unset = new LeaderUrls(undefined);
  assert.equal(unset.refusal(new URL('http://127.0.0.1:7341/api/endpoints')), undefined);
  assert.equal(unset.refusal(new URL('http://[::1]:7341/')), undefined);
  assert.match(unset.refusal(new URL('http://10.0.0.5:7340/'))!, /not on loopback, and replica\.leaderUrls .* is not set/);
  assert.match(unset.refusal(new URL('https://leader.internal/'))!, /not on loopback/);
  const listed = new LeaderUrls(['https://*.discovery.internal:8443', 'http://127.0.0.1:7340']);
  assert.equal(listed.refusal(new URL('https://a.discovery.internal:8443/api/sources')), undefined);
  assert.equal(listed.refusal(new URL('http://127.0.0.1:7340/api/sources')), undefined);
  for (const url of ['http://a.discovery.internal:8443/', 'https://discovery.internal:8443/', 'https://a.discovery.internal/', 'http://127.0.0.1:7341/', 'https://evil.test:8443/']) {
    assert.match(listed.refusal(new URL(url)) ?? '', /replica\.leaderUrls allows/, url);
  }
  assert.throws(() => new LeaderUrls(['http://10.0.0.5:7340']), /http is allowed only for loopback hosts; use https/);
  // Pods: an origin over an address range, scheme and port exact; a name never matches it.
  const pods = new LeaderUrls(['http://10.244.0.0/16:7340', 'https://[fd00::/8]:8443']);
  assert.equal(pods.refusal(new URL('http://10.244.3.7:7340/api/endpoints')), undefined);
  assert.equal(pods.refusal(new URL('https://[fd00::12]:8443/api/endpoints')), undefined);
  for (const url of ['http://10.245.0.1:7340/', 'http://10.244.3.7:7341/', 'https://10.244.3.7:7340/', 'http://pod.10.244.3.7.nip.io:7340/', 'http://[fd00::12]:8443/', 'http://169.254.169.254:7340/']) {
    assert.match(pods.refusal(new URL(url)) ?? '', /replica\.leaderUrls allows/, url);
  }
  assert.throws(() => new LeaderUrls(['http://10.244.0.0/16']), /address range .* \(scheme, CIDR range, port\)/, 'a range needs its port');
  assert.throws(() => new LeaderUrls(['http://10.244.0.0/33:7340']), /address range/);
});

test('configuration: replica.leaderUrls by the allowlist’s rules, the key read and at least 32 characters, never written inline', async () => {
  const { parseConfig } = await import('../../packages/core/src/config/parse-config.js');
  const { resolveSecrets } = await import('../../packages/core/src/config/resolve-secrets.js');
  const { serviceOptionsFromConfig } = await import('../../packages/service/src/assembly/from-config.js');
  const agent = 'static:\n  - { name: warranty_agent, url: "http://127.0.0.1:9/", description: Answers warranty questions., tags: [warranty] }\nvocabulary:\n  - { tag: warranty, description: Warranty status. }\n';
  const base = `allowLoopback: true\nallow: ["http://127.0.0.1:9"]\nstore: postgres://a2a@127.0.0.1:5432/db\n${agent}`;
  const problems = (text: string): Array<{ path: string; message: string }> => {
    try {
      parseConfig(text);
    } catch (err) {
      return (err as { problems: Array<{ path: string; message: string }> }).problems;
    }
    return [];
  };
  const bad = problems(`${base}replica:\n  leaderUrls: ["https://*.discovery.internal:8443", "http://10.0.0.5:7340"]\n`);
  assert.deepEqual(bad.map((p) => p.path), ['replica.leaderUrls[1]']);
  assert.match(bad[0]!.message, /http is allowed only for loopback hosts; use https/);
  assert.deepEqual(problems(`${base}replica:\n  leaderUrls: ["http://10.244.0.0/16:7340", "http://10.0.0.0/8", "https://*.discovery.internal:8443"]\n`).map((p) => p.path), ['replica.leaderUrls[1]'], 'a range without its port');
  assert.deepEqual(problems(`${base}replica:\n  keyEnv: RK\n  keyFile: rk.txt\n`).map((p) => p.path), ['replica.keyFile']);
  assert.deepEqual(problems(`allowLoopback: true\nallow: ["http://127.0.0.1:9"]\n${agent}replica:\n  keyEnv: RK\n`).map((p) => p.path), ['replica.keyEnv'], 'a SQLite store has no replicas');
  assert.deepEqual(problems(`${base}replica:\n  key: inline-secret\n`).map((p) => p.path), ['replica.key'], 'never inline');

  const config = parseConfig(`${base}replica:\n  keyEnv: RK\n  leaderUrls: ["https://*.discovery.internal:8443"]\n`);
  await assert.rejects(resolveSecrets(config, { RK: 'short' }), (err: Error & { problems: Array<{ path: string; message: string }> }) => {
    assert.equal(err.problems[0]!.path, 'replica.keyEnv');
    assert.match(err.problems[0]!.message, /5 characters; at least 32/);
    assert.ok(!err.message.includes('short'), 'the value is never quoted');
    return true;
  });
  const secrets = await resolveSecrets(config, { RK: KEY });
  assert.equal(secrets.replicaKey, KEY);
  assert.ok(!JSON.stringify(secrets).includes(KEY), 'redacted when logged');
  const options = serviceOptionsFromConfig(config, secrets);
  assert.equal(options.replica?.key, KEY);
  assert.deepEqual(options.replica?.leaderUrls, ['https://*.discovery.internal:8443']);
  assert.equal(options.token, undefined, 'the replica key is not the service token');
  await secrets.credentials.close();
});
