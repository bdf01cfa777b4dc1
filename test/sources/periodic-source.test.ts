/**
 * The one periodic refresh (PeriodicSource): single flight, a timeout on the injected clock,
 * abort on close, an outage keeps the last good list, and the interval a read asks for.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { DiscoveryError } from '../../packages/core/src/errors.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import { PeriodicSource, type Listing } from '../../packages/core/src/sources/periodic-source.js';

type Read = (signal: AbortSignal) => Promise<Listing | undefined>;

class Probe extends PeriodicSource {
  reads = 0;
  releasedCalls = 0;
  constructor(
    public next: Read,
    options: { clock: VirtualClock; events?: EventStream; timeoutMs?: number },
  ) {
    super({
      id: 'probe',
      kind: 'registry',
      pollIntervalMs: 1_000,
      closedReason: 'the probe was closed',
      failure: { code: 'ERR_FETCH_NETWORK', url: 'https://upstream.example', prefix: 'probe: ' },
      clock: options.clock,
      events: options.events,
      ...(options.timeoutMs !== undefined && { timeout: { ms: options.timeoutMs, error: () => new DiscoveryError('ERR_FETCH_TIMEOUT', `probe took longer than ${options.timeoutMs}`, { stage: 'source' }) } }),
    });
  }
  protected read(signal: AbortSignal): Promise<Listing | undefined> {
    this.reads++;
    return this.next(signal);
  }
  protected override released(): void {
    this.releasedCalls++;
  }
}

const record = (name: string) => ({ name, baseUrl: `https://${name}.example/`, source: 'probe', metadata: {} });

/** A read that waits until its signal is aborted. */
const hanging: Read = (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));

test('concurrent refreshes share one read; a failure keeps the last good list, raises source-error once and falls back to the configured interval', async () => {
  const clock = new VirtualClock();
  const events = new EventStream();
  const alerts: string[] = [];
  events.subscribe((e) => {
    if (e.type === 'alert' || e.type === 'alert.resolved') alerts.push(`${e.type}:${e.kind}`);
  });
  const source = new Probe(async () => ({ records: [record('a')], pollIntervalMs: 5_000 }), { clock, events });
  const [one, two] = await Promise.all([source.refresh(), source.refresh()]);
  assert.equal(source.reads, 1);
  assert.equal(one, two);
  assert.equal(source.pollIntervalMs, 5_000);
  source.next = async () => {
    throw new Error('connection refused');
  };
  const failed = await source.refresh();
  await source.refresh();
  assert.equal(failed.ok, false);
  assert.equal(failed.error?.code, 'ERR_FETCH_NETWORK');
  assert.equal(failed.error?.message, 'probe: connection refused');
  assert.equal(failed.error?.url, 'https://upstream.example');
  assert.deepEqual(failed.records.map((r) => r.name), ['a']);
  assert.equal(source.pollIntervalMs, 1_000);
  source.next = async () => ({ records: [record('b')] });
  assert.deepEqual((await source.refresh()).records.map((r) => r.name), ['b']);
  assert.deepEqual(alerts, ['alert:source-error', 'alert.resolved:source-error']);
  await source.close();
});

test('the timeout runs on the injected clock and fails the refresh with the source error', async () => {
  const clock = new VirtualClock();
  const source = new Probe(hanging, { clock, timeoutMs: 300 });
  const pending = source.refresh();
  await clock.advance(299);
  assert.equal(source.current().ok, true, 'not yet');
  await clock.advance(1);
  const state = await pending;
  assert.equal(state.error?.code, 'ERR_FETCH_TIMEOUT');
  assert.equal(clock.pendingTimers, 0);
  await source.close();
});

test('close aborts the read in flight, takes nothing from it, then releases; a closed source does not read', async () => {
  const clock = new VirtualClock();
  let aborted: unknown;
  let commits = 0;
  const source = new Probe(
    (signal) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          aborted = signal.reason;
          resolve({ records: [record('late')], commit: () => commits++ });
        }),
      ),
    { clock },
  );
  const pending = source.refresh();
  await source.close();
  const state = await pending;
  assert.match(String(aborted), /the probe was closed/);
  assert.equal(state.records.length, 0);
  assert.equal(state.ok, true, 'no error after close');
  assert.equal(commits, 0);
  assert.equal(source.releasedCalls, 1);
  await source.refresh();
  await source.close();
  assert.equal(source.reads, 1);
  assert.equal(source.releasedCalls, 1);
});

test('a configuration error found late rejects the refresh (Source.refresh)', async () => {
  const source = new Probe(async () => {
    throw new DiscoveryError('ERR_CONFIG_INVALID', 'an optional dependency is missing', { stage: 'config' });
  }, { clock: new VirtualClock() });
  await assert.rejects(source.refresh(), /optional dependency/);
  await source.close();
});
