import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { staticSource, type StaticAgentConfig } from '../../packages/core/src/sources/index.js';
import { isDiscoveryError, type DiscoveryError } from '../../packages/core/src/errors.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';

function configError(fn: () => unknown): DiscoveryError {
  try {
    fn();
  } catch (err) {
    assert.ok(isDiscoveryError(err), `expected a DiscoveryError, got ${String(err)}`);
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    assert.equal(err.stage, 'config');
    return err;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

const billing: StaticAgentConfig = {
  name: 'billing',
  url: 'https://billing.example.com/',
  description: 'Answers invoice questions.',
  tags: ['billing', 'invoices'],
  critical: true,
};
const weather: StaticAgentConfig = { name: 'weather_eu', url: 'https://weather.example.com/a2a', description: 'European forecasts.', tags: ['weather'] };

describe('static source', () => {
  test('validation reports every bad entry at once, each at its index path', () => {
    const err = configError(() =>
      staticSource({
        agents: [
          billing,
          { name: 'Bad Name', url: 'not a url', description: '', tags: [] },
          { ...weather, tags: ['ok', 'has,comma', ''] },
          { ...weather, name: 'billing', url: 'ftp://files.example.com/', critical: 'yes' as unknown as boolean },
          'nope' as unknown as StaticAgentConfig,
          { ...weather, url: 'https://user:pw@weather.example.com/' },
        ],
      }),
    );
    const paths = err.problems.map((p) => p.path);
    assert.deepEqual(paths, [
      'agents[1].name',
      'agents[1].url',
      'agents[1].description',
      'agents[1].tags',
      'agents[2].tags[1]',
      'agents[2].tags[2]',
      'agents[3].name',
      'agents[3].url',
      'agents[3].critical',
      'agents[4]',
      'agents[5].name',
      'agents[5].url',
    ]);
    assert.match(err.problems[6]!.message, /duplicate local name "billing", already used by agents\[0\]/);
    assert.match(err.problems[7]!.message, /not an http\(s\) URL/);
    assert.match(err.problems[11]!.message, /credentials/);
    assert.match(err.message, /12 problem\(s\)/);
    assert.equal(err.path, 'agents[1].name');
    // The message lists the first ten; the error's problems hold every one.
    assert.match(err.message, /agents\[4\]: must be an object[^;]*; and 2 more \(the error's `problems` has each\)$/);
  });

  test('5,000 misnamed agents: every problem in the error, a message that lists ten', () => {
    const agents = Array.from({ length: 5_000 }, (_, i) => ({ ...weather, name: `Fleet-Agent-${i}`, url: `https://w${i}.example.com/` }));
    const err = configError(() => staticSource({ agents }));
    assert.equal(err.problems.length, 5_000);
    assert.equal(err.problems[4_999]!.path, 'agents[4999].name');
    assert.match(err.message, /^static source: 5000 problem\(s\): agents\[0\]\.name: /);
    assert.equal(err.message.split('; ').length, 11);
    assert.ok(err.message.length < 2_000, `a message of ${err.message.length} characters`);
  });

  test('"user" is refused as a local name: ADK reserves it for end-user input', () => {
    const err = configError(() => staticSource({ agents: [{ name: 'user', url: 'https://u.example.com/', description: 'd', tags: ['t'] }] }));
    assert.deepEqual(err.problems.map((p) => [p.path, p.message]), [['agents[0].name', '"user" is reserved by ADK for end-user input']]);
  });

  test('options themselves are checked: id and agents', () => {
    const err = configError(() => staticSource({ id: '', agents: 'x' as unknown as StaticAgentConfig[] }));
    assert.deepEqual(
      err.problems.map((p) => p.path),
      ['id', 'agents'],
    );
  });

  test('records are as configured, synced before any refresh, with metadata and the config by name', async () => {
    const clock = new VirtualClock({ wallStart: Date.UTC(2026, 0, 2) });
    const source = staticSource({ agents: [billing, weather], clock });
    assert.equal(source.id, 'static');
    assert.equal(source.kind, 'static');
    assert.equal(source.pollIntervalMs, undefined);
    const state = source.current();
    assert.equal(state.synced, true);
    assert.equal(state.ok, true);
    assert.equal(state.updatedAt, Date.UTC(2026, 0, 2));
    assert.deepEqual(state.records, [
      {
        name: 'billing',
        baseUrl: 'https://billing.example.com/',
        source: 'static',
        metadata: { description: 'Answers invoice questions.', tags: 'billing,invoices', critical: 'true' },
      },
      {
        name: 'weather_eu',
        baseUrl: 'https://weather.example.com/a2a',
        source: 'static',
        metadata: { description: 'European forecasts.', tags: 'weather', critical: 'false' },
      },
    ]);
    assert.ok(Object.isFrozen(state.records) && Object.isFrozen(state.records[0]) && Object.isFrozen(state.records[0]!.metadata));
    assert.deepEqual(source.agent('billing'), { ...billing });
    assert.equal(source.agent('weather_eu')?.critical, false);
    assert.equal(source.agent('nope'), undefined);
    assert.ok(Object.isFrozen(source.agents[0]!.tags));

    let calls = 0;
    source.subscribe(() => calls++);
    await clock.advance(1000);
    const refreshed = await source.refresh();
    assert.equal(refreshed.records, state.records, 'an unchanged list keeps its identity');
    assert.equal(refreshed.updatedAt, Date.UTC(2026, 0, 2) + 1000);
    assert.equal(calls, 0, 'no notification when nothing changed');
    await source.start();
    await source.close();
  });

  test('the configuration is copied: later mutation of the input changes nothing', () => {
    const input = { ...billing, tags: ['billing'] };
    const source = staticSource({ id: 'mine', agents: [input] });
    input.tags.push('extra');
    input.url = 'https://elsewhere.example.com/';
    assert.deepEqual(source.agent('billing')?.tags, ['billing']);
    assert.equal(source.current().records[0]!.baseUrl, 'https://billing.example.com/');
    assert.equal(source.current().records[0]!.source, 'mine');
  });
});
