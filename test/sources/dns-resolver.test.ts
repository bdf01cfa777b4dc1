/**
 * The DNS resolver client (packages/core/src/sources/dns-resolver.ts) against an off-path
 * attacker (issue 37), on real loopback sockets and without Knot: the server is the in-process
 * stand-in of test/helpers/dns-stand-in.ts, and the "attacker" a second UDP socket on 127.0.0.1
 * that sends from another port. A datagram from elsewhere, with another id or for another
 * question is ignored and the real answer taken; TC=1 is asked again over TCP once, and a TCP
 * answer still truncated, malformed or mismatched fails clearly; query ids come from the
 * injected source (node:crypto by default, not Math.random); the retry backoff is the project's
 * `backoffDelay` on the injected clock and random source.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { createDnsResolver } from '../../packages/core/src/sources/dns-resolver.js';
import { answerFor, startStandInDns, txtRecord, type StandInDns, type StandInQuery } from '../helpers/dns-stand-in.js';

const NAME = '_billing._a2a._agents.agents.test';
let dns: StandInDns;
let spoofer: Socket;

before(async () => {
  dns = await startStandInDns(() => undefined);
  spoofer = createSocket('udp4');
  await new Promise<void>((r) => spoofer.bind(0, '127.0.0.1', () => r()));
});

after(async () => {
  await dns.close();
  await new Promise<void>((r) => spoofer.close(() => r()));
});

beforeEach(() => {
  dns.queries.length = 0;
});

const txt = (q: StandInQuery, text: string) => txtRecord(q.name, 60, [text]);
const real = (q: StandInQuery) => answerFor(q, [txt(q, 'from=resolver')]);
const forged = (q: StandInQuery, o: Parameters<typeof answerFor>[2] = {}) => answerFor(q, [txt(q, 'from=attacker')], o);
const texts = (answer: { records: readonly { data: unknown }[] }) => answer.records.flatMap((r) => r.data as string[]);
/** A short timeout: the real answer comes within milliseconds; a test that waits for it fails. */
const resolver = (extra: Partial<Parameters<typeof createDnsResolver>[0]> = {}) => createDnsResolver({ servers: [dns.address], timeoutMs: 1_500, retries: 0, ...extra });

test('an answer from another port of the same address (an off-path spoofer) is ignored; the resolver\'s own answer is taken', async () => {
  dns.handler = async (q) => {
    // The forgery is right in every other way (id, question) and arrives first.
    await new Promise<void>((r) => spoofer.send(dnsPacket.encode(forged(q)), q.from.port, q.from.address, () => r()));
    return real(q);
  };
  const answer = await resolver().query(NAME, 'TXT');
  assert.deepEqual(texts(answer), ['from=resolver']);
  assert.equal(answer.server, dns.address);
});

test('an answer from another address (the same port, on ::1 asked as 127.0.0.1) is ignored', async (t) => {
  // The resolver asked is [::1]:<port>; the stand-in answers from 127.0.0.1:<port>: a different address.
  const v6 = createSocket('udp6');
  try {
    await new Promise<void>((resolve, reject) => {
      v6.once('error', reject);
      v6.bind(0, '::1', () => resolve());
    });
  } catch {
    v6.close();
    t.skip('no IPv6 loopback here');
    return;
  }
  const port = v6.address().port;
  const wrongAddress = createSocket('udp4');
  const bound = await new Promise<boolean>((resolve) => {
    wrongAddress.once('error', () => resolve(false));
    wrongAddress.bind(port, '127.0.0.1', () => resolve(true));
  });
  if (!bound) {
    v6.close();
    t.skip(`port ${port} taken on 127.0.0.1`);
    return;
  }
  v6.on('message', (msg, rinfo) => {
    const q = dnsPacket.decode(msg);
    const query = { id: q.id ?? 0, name: q.questions![0]!.name, type: q.questions![0]!.type, class: 'IN' } as StandInQuery;
    // The right port, the wrong address first; then the real answer from [::1]:<port>.
    wrongAddress.send(dnsPacket.encode(forged(query)), rinfo.port, '127.0.0.1', () => {
      v6.send(dnsPacket.encode(real(query)), rinfo.port, rinfo.address);
    });
  });
  try {
    const answer = await createDnsResolver({ servers: [`[::1]:${port}`], timeoutMs: 1_500, retries: 0 }).query(NAME, 'TXT');
    assert.deepEqual(texts(answer), ['from=resolver']);
  } finally {
    v6.close();
    wrongAddress.close();
  }
});

test('an answer with another id is ignored, not fatal; the answer with the query\'s id is taken', async () => {
  dns.handler = (q) => [forged(q, { id: (q.id + 1) % 65_536 }), real(q)];
  const answer = await resolver().query(NAME, 'TXT');
  assert.deepEqual(texts(answer), ['from=resolver']);
});

test('an answer for another question (name, type or class) is ignored; the question is compared case-insensitively', async () => {
  for (const question of [
    { name: '_evil._a2a._agents.agents.test', type: 'TXT' },
    { name: NAME, type: 'A' },
    { name: NAME, type: 'TXT', class: 'CH' },
  ]) {
    dns.handler = (q) => [forged(q, { question }), real(q)];
    const answer = await resolver().query(NAME, 'TXT');
    assert.deepEqual(texts(answer), ['from=resolver'], JSON.stringify(question));
  }
  // The echoed name in other letters' case is the same question (RFC 4343).
  dns.handler = (q) => answerFor(q, [txt(q, 'from=resolver')], { question: { name: NAME.toUpperCase(), type: 'TXT' } });
  assert.deepEqual(texts(await resolver().query(NAME, 'TXT')), ['from=resolver']);
});

test('only ignored datagrams: the attempt times out (ERR_FETCH_TIMEOUT) and says what it ignored', async () => {
  dns.handler = (q) => [forged(q, { id: (q.id + 1) % 65_536 }), Buffer.from('not dns')];
  await assert.rejects(resolver({ timeoutMs: 300 }).query(NAME, 'TXT'), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ERR_FETCH_TIMEOUT');
    assert.match(err.message, /^DNS TXT _billing\._a2a\._agents\.agents\.test at resolver 127\.0\.0\.1:\d+: no answer over UDP within timeoutMs 300 \(2 datagrams ignored, the last was not a DNS message\)$/);
    return true;
  });
});

test('TC=1 over UDP is asked again over TCP, once, with the same id and question', async () => {
  dns.handler = (q) => (q.transport === 'udp' ? answerFor(q, [], { tc: true }) : answerFor(q, [txt(q, 'over=tcp')]));
  const before = dns.tcpConnections();
  const answer = await resolver().query(NAME, 'TXT');
  assert.equal(answer.tcp, true);
  assert.deepEqual(texts(answer), ['over=tcp']);
  assert.equal(dns.tcpConnections() - before, 1);
  assert.deepEqual(dns.queries.map((q) => q.transport), ['udp', 'tcp']);
  assert.equal(dns.queries[1]!.id, dns.queries[0]!.id);
});

test('a TCP answer that is truncated again fails with a clear error, after one TCP query (no loop)', async () => {
  dns.handler = (q) => answerFor(q, [], { tc: true });
  const before = dns.tcpConnections();
  await assert.rejects(resolver({ retries: 0 }).query(NAME, 'TXT'), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ERR_FETCH_NETWORK');
    assert.match(err.message, /^DNS TXT _billing\._a2a\._agents\.agents\.test at resolver 127\.0\.0\.1:\d+: the TCP answer is truncated too \(TC bit set\); it is not asked again$/);
    return true;
  });
  assert.equal(dns.tcpConnections() - before, 1);
  assert.deepEqual(dns.queries.map((q) => q.transport), ['udp', 'tcp']);
  // With retries, each attempt asks over TCP once: bounded by the attempts.
  dns.queries.length = 0;
  await assert.rejects(resolver({ retries: 2, backoffMs: 0 }).query(NAME, 'TXT'), /truncated too/);
  assert.deepEqual(dns.queries.map((q) => q.transport), ['udp', 'tcp', 'udp', 'tcp', 'udp', 'tcp']);
});

test('a malformed TCP answer, or one with another id or question, fails the attempt clearly', async () => {
  const cases: Array<[(q: StandInQuery) => Buffer | dnsPacket.Packet, RegExp]> = [
    [() => Buffer.from([0x12, 0x34, 0x81]), /: the TCP answer is not a DNS message \(/],
    [(q) => forged(q, { id: (q.id + 1) % 65_536 }), /: the TCP answer carried id \d+, not the query's$/],
    [(q) => forged(q, { question: { name: 'other.agents.test', type: 'TXT' } }), /: the TCP answer was for another question \(other\.agents\.test TXT IN\)$/],
  ];
  for (const [tcpReply, message] of cases) {
    dns.handler = (q) => (q.transport === 'udp' ? answerFor(q, [], { tc: true }) : tcpReply(q));
    await assert.rejects(resolver().query(NAME, 'TXT'), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'ERR_FETCH_NETWORK');
      assert.match(err.message, message);
      return true;
    });
  }
});

test('query ids come from the injected source; each attempt draws one', async () => {
  const ids = [7, 4242, 65_535];
  dns.handler = (q) => (q.id === 65_535 ? real(q) : undefined);
  const answer = await resolver({ queryId: () => ids.shift()!, timeoutMs: 100, retries: 2, backoffMs: 0 }).query(NAME, 'TXT');
  assert.deepEqual(texts(answer), ['from=resolver']);
  assert.deepEqual(dns.queries.map((q) => q.id), [7, 4242, 65_535]);
  // A source returning something that is not a 16-bit id is a configuration error, not a query.
  dns.queries.length = 0;
  await assert.rejects(resolver({ queryId: () => 70_000 }).query(NAME, 'TXT'), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    assert.match(err.message, /the queryId option returned 70000, not a query id from 0 to 65535/);
    return true;
  });
  assert.equal(dns.queries.length, 0);
});

test('by default ids do not come from Math.random (stubbed to a constant here, ids still differ)', async (t) => {
  t.mock.method(Math, 'random', () => 0.5);
  dns.handler = real;
  const r = resolver();
  for (let i = 0; i < 8; i++) await r.query(NAME, 'TXT');
  const ids = new Set(dns.queries.map((q) => q.id));
  // Eight draws of 16 bits: all equal only with probability 2^-112.
  assert.ok(ids.size > 1, `ids ${[...ids].join(', ')}`);
  assert.equal(dns.queries.some((q) => q.id === 32_768), false, 'not Math.floor(Math.random() * 65536)');
});

test('the retry backoff is backoffDelay on the injected clock and random source; the timeouts are the clock\'s timers', async () => {
  const clock = new VirtualClock();
  dns.handler = () => undefined;
  const failed = resolver({ clock, random: () => 0.5, timeoutMs: 1_000, retries: 2, backoffMs: 400 }).query(NAME, 'TXT').catch((err: Error) => err);
  const sent = async (n: number) => {
    for (let i = 0; i < 200 && dns.queries.length < n; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(dns.queries.length, n);
  };
  await sent(1);
  // The first attempt's timeout is the clock's: nothing happens until it is advanced.
  assert.equal(clock.nextTimerAt(), 1_000);
  await clock.advance(1_000);
  // Then the first backoff: 400 ms shortened by jitter 0.5 × random 0.5 = 300 ms.
  assert.equal(clock.nextTimerAt(), 1_300);
  await clock.advance(300);
  await sent(2);
  await clock.advance(1_000);
  // The second: 800 ms, shortened by a quarter: 600 ms.
  assert.equal(clock.nextTimerAt(), 2_300 + 600);
  await clock.advance(600);
  await sent(3);
  await clock.advance(1_000);
  const err = (await failed) as Error & { code?: string };
  assert.equal(err.code, 'ERR_FETCH_TIMEOUT');
  assert.equal(clock.pendingTimers, 0);
});

test('an abort during the backoff ends the query at once, as aborted', async () => {
  const clock = new VirtualClock();
  dns.handler = () => undefined;
  const controller = new AbortController();
  const failed = resolver({ clock, timeoutMs: 1_000, retries: 2, backoffMs: 10_000 }).query(NAME, 'TXT', { signal: controller.signal }).catch((err: Error) => err);
  for (let i = 0; i < 200 && dns.queries.length < 1; i++) await new Promise((r) => setTimeout(r, 5));
  await clock.advance(1_000);
  controller.abort();
  const err = (await failed) as Error & { code?: string };
  assert.equal(err.code, 'ERR_FETCH_NETWORK');
  assert.match(err.message, /^DNS TXT _billing\._a2a\._agents\.agents\.test: aborted$/);
  assert.equal(dns.queries.length, 1);
});

test('the new options are validated like the others', () => {
  assert.throws(() => createDnsResolver({ servers: ['127.0.0.1:53'], queryId: 5 as unknown as () => number, clock: {} as never, random: 'x' as never }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    assert.match(err.message, /clock: must be a Clock \(setTimer, sleep\)/);
    assert.match(err.message, /random: must be a function returning numbers in \[0, 1\)/);
    assert.match(err.message, /queryId: must be a function returning query ids from 0 to 65535/);
    return true;
  });
});

test('a record for another owner name in the answer is ignored (listed in ignoredOwners), never read as the asked name\'s record', async () => {
  // A well-formed answer from the resolver asked (id, question right) that adds a record owned by
  // another name, first: the hostile one would be read first.
  dns.handler = (q) => answerFor(q, [txtRecord('_evil._a2a._agents.agents.test', 60, ['from=attacker']), txtRecord('AGENTS.test.', 60, ['from=attacker']), txt(q, 'from=resolver')]);
  const answer = await resolver().query(NAME, 'TXT');
  assert.deepEqual(texts(answer), ['from=resolver']);
  assert.deepEqual(answer.records.map((r) => r.name), [NAME]);
  assert.deepEqual(answer.ignoredOwners, ['_evil._a2a._agents.agents.test', 'agents.test']);
  // Only records of another owner: the answer has none (the asked name is not answered by them).
  dns.handler = (q) => answerFor(q, [txtRecord('_evil._a2a._agents.agents.test', 60, ['from=attacker'])]);
  const none = await resolver().query(NAME, 'TXT');
  assert.deepEqual(none.records, []);
  assert.deepEqual(none.ignoredOwners, ['_evil._a2a._agents.agents.test']);
  // An ordinary answer has no ignoredOwners; the owner compared case-insensitively, trailing dot or not.
  dns.handler = (q) => answerFor(q, [txtRecord(`${NAME.toUpperCase()}.`, 60, ['from=resolver'])]);
  const plain = await resolver().query(NAME, 'TXT');
  assert.deepEqual(texts(plain), ['from=resolver']);
  assert.equal(plain.ignoredOwners, undefined);
});

test('a CNAME chain from the asked name is followed (in any order): the records of its end are the answer, records of any other owner are ignored', async () => {
  const cname = (from: string, to: string) => ({ type: 'CNAME', name: from, ttl: 60, class: 'IN', data: to }) as dnsPacket.Answer;
  dns.handler = (q) => answerFor(q, [
    txtRecord('other.agents.test', 60, ['from=attacker']),
    txtRecord('final.agents.test', 60, ['from=resolver']),
    cname('middle.agents.test', 'final.agents.test'),
    cname(NAME, 'middle.agents.test'),
    // A CNAME owned by another name moves nothing.
    cname('unrelated.agents.test', 'other.agents.test'),
  ]);
  const answer = await resolver().query(NAME, 'TXT');
  assert.deepEqual(texts(answer), ['from=resolver']);
  assert.deepEqual(answer.records.map((r) => r.name), ['final.agents.test']);
  assert.deepEqual(answer.ignoredOwners, ['other.agents.test']);
  // A CNAME loop ends where it closes: no record of the loop's names is taken from elsewhere.
  dns.handler = (q) => answerFor(q, [cname(NAME, 'a.agents.test'), cname('a.agents.test', NAME), txtRecord('b.agents.test', 60, ['from=attacker'])]);
  const loop = await resolver().query(NAME, 'TXT');
  assert.deepEqual(loop.records, []);
  assert.deepEqual(loop.ignoredOwners, ['b.agents.test']);
});
