/**
 * The Kubernetes source against a FAKE API server (test/helpers/fake-kube-api.ts): a loopback
 * HTTP server that speaks the Service list and watch endpoints. No cluster runs here.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { kubernetesSource, type KubernetesSourceOptions, type Source, type SourceState } from '../../packages/core/src/sources/index.js';
import { loadKubernetesClient } from '../../packages/core/src/sources/kubernetes-client.js';
import { EventStream, type AlertEvent, type DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { fakeService, startFakeKubeApi, type FakeKubeApi } from '../helpers/fake-kube-api.js';

const LABELS = { 'a2a.example.com/agent': 'true' };
const SELECTOR = 'a2a.example.com/agent=true';

describe('kubernetes source against a FAKE API server (loopback HTTP, no cluster)', () => {
  let api: FakeKubeApi;
  let events: EventStream;
  let seen: DiscoveryEvent[];
  let sources: Source[] = [];
  const alerts = (kind: string) => seen.filter((e): e is AlertEvent => e.type === 'alert' && e.kind === kind);
  const lists = () => api.requests.filter((r) => !r.watch);
  const watchRequests = () => api.requests.filter((r) => r.watch);
  const names = (state: SourceState) => state.records.map((r) => r.name);

  function make(options: Partial<KubernetesSourceOptions> = {}): Source {
    const kc = new KubeConfig();
    kc.loadFromOptions(api.kubeConfigOptions());
    const source = kubernetesSource({ id: 'cluster', namespace: 'agents', labelSelector: SELECTOR, kubeConfig: kc, events, initialBackoffMs: 20, maxBackoffMs: 100, ...options });
    sources.push(source);
    return source;
  }

  beforeEach(async () => {
    api = await startFakeKubeApi();
    events = new EventStream();
    seen = [];
    events.subscribe((e) => seen.push(e));
  });
  afterEach(async () => {
    await Promise.all(sources.map((s) => s.close()));
    sources = [];
    await api.waitFor(() => api.openWatches === 0, 'every watch to be closed by the client');
    await api.close();
  });

  /** Two matching Services in `agents`, one in `elsewhere`. */
  function seed(): void {
    api.apply(fakeService({ namespace: 'agents', name: 'billing', labels: LABELS, ports: [{ name: 'a2a', port: 8443 }] }));
    api.apply(fakeService({ namespace: 'agents', name: 'weather', labels: LABELS, ports: [{ port: 443 }] }));
    api.apply(fakeService({ namespace: 'elsewhere', name: 'billing', labels: LABELS, ports: [{ port: 80 }] }));
  }

  test('kubernetes source against a fake API server: the initial list gives records by the base-URL rules, and the label selector is sent', async () => {
    api.apply(fakeService({ namespace: 'agents', name: 'billing', labels: LABELS, ports: [{ name: 'metrics', port: 9090 }, { name: 'a2a', port: 8443 }] }));
    api.apply(fakeService({ namespace: 'agents', name: 'weather', labels: LABELS, annotations: { 'a2a-discovery/port': 'web' }, ports: [{ name: 'a2a', port: 1 }, { name: 'web', port: 8080 }] }));
    api.apply(fakeService({ namespace: 'agents', name: 'travel', labels: LABELS, annotations: { 'a2a-discovery/base-url': 'https://travel.example.com/a2a/' }, ports: [{ port: 80 }] }));
    api.apply(fakeService({ namespace: 'agents', name: 'plain', labels: LABELS, annotations: { 'a2a-discovery/port': '7443' }, ports: [{ port: 80 }] }));
    api.apply(fakeService({ namespace: 'agents', name: 'first', labels: LABELS, ports: [{ name: 'http', port: 8000 }, { name: 'grpc', port: 9000 }] }));
    api.apply(fakeService({ namespace: 'agents', name: 'noports', labels: LABELS }));
    api.apply(fakeService({ namespace: 'agents', name: 'unlabelled', ports: [{ port: 80 }] }));
    api.apply(fakeService({ namespace: 'elsewhere', name: 'billing', labels: LABELS, ports: [{ port: 80 }] }));

    const source = make();
    assert.equal(source.kind, 'kubernetes');
    assert.equal(source.pollIntervalMs, undefined);
    assert.equal(api.requests.length, 0, 'no I/O before refresh()');
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.equal(state.synced, true);
    assert.deepEqual(state.records, [
      {
        name: 'agents/billing',
        baseUrl: 'https://billing.agents.svc.cluster.local:8443/',
        source: 'cluster',
        metadata: { namespace: 'agents', service: 'billing', port: '8443', baseUrlFrom: 'port-name' },
      },
      {
        name: 'agents/first',
        baseUrl: 'https://first.agents.svc.cluster.local:8000/',
        source: 'cluster',
        metadata: { namespace: 'agents', service: 'first', port: '8000', baseUrlFrom: 'first-port' },
      },
      {
        name: 'agents/plain',
        baseUrl: 'https://plain.agents.svc.cluster.local:7443/',
        source: 'cluster',
        metadata: { namespace: 'agents', service: 'plain', port: '7443', baseUrlFrom: 'port-annotation' },
      },
      {
        name: 'agents/travel',
        baseUrl: 'https://travel.example.com/a2a/',
        source: 'cluster',
        metadata: { namespace: 'agents', service: 'travel', baseUrlFrom: 'annotation' },
      },
      {
        name: 'agents/weather',
        baseUrl: 'https://weather.agents.svc.cluster.local:8080/',
        source: 'cluster',
        metadata: { namespace: 'agents', service: 'weather', port: '8080', baseUrlFrom: 'port-annotation' },
      },
    ]);
    assert.deepEqual(
      state.problems?.map((p) => p.path),
      ['agents/noports.spec.ports'],
    );
    assert.equal(alerts('source-problem').length, 1);
    assert.match(alerts('source-problem')[0]!.message, /no usable port/);

    const [list] = api.requests;
    assert.equal(list?.path, '/api/v1/namespaces/agents/services');
    assert.equal(list?.query['labelSelector'], SELECTOR);
    assert.equal(list?.watch, false);
    assert.equal(list?.authorization, 'Bearer t');
    assert.equal(watchRequests().length, 0, 'refresh() alone does not watch');
  });

  test('kubernetes source against a fake API server: a watched ADDED appears (subscriber notified), MODIFIED updates, DELETED disappears, BOOKMARK is ignored', async () => {
    seed();
    const source = make({ scheme: 'http', clusterDomain: 'corp.internal' });
    const notified: SourceState[] = [];
    source.subscribe((s) => notified.push(s));
    await source.start();
    const before = source.current();
    assert.ok(before.synced);
    assert.ok(names(before).includes('agents/billing'));
    await api.waitFor(() => api.openWatches === 1, 'the watch to open');
    const [watch] = watchRequests();
    assert.equal(watch?.path, '/api/v1/namespaces/agents/services');
    assert.equal(watch?.query['labelSelector'], SELECTOR);
    assert.equal(watch?.query['resourceVersion'], lists()[0]?.query['resourceVersion'] ?? api.resourceVersion);
    assert.equal(watch?.query['allowWatchBookmarks'], 'true');
    const notifiedAfterList = notified.length;

    api.apply(fakeService({ namespace: 'agents', name: 'newcomer', labels: LABELS, ports: [{ name: 'a2a', port: 443 }] }));
    await api.waitFor(() => names(source.current()).includes('agents/newcomer'), 'ADDED to reach the source');
    assert.equal(notified.length, notifiedAfterList + 1);
    assert.equal(notified.at(-1)?.records.find((r) => r.name === 'agents/newcomer')?.baseUrl, 'http://newcomer.agents.svc.corp.internal:443/');

    api.apply(fakeService({ namespace: 'agents', name: 'newcomer', labels: LABELS, ports: [{ name: 'a2a', port: 8443 }] }));
    await api.waitFor(() => source.current().records.some((r) => r.baseUrl === 'http://newcomer.agents.svc.corp.internal:8443/'), 'MODIFIED to reach the source');

    const count = notified.length;
    api.bookmark();
    api.remove('agents', 'newcomer');
    await api.waitFor(() => !names(source.current()).includes('agents/newcomer'), 'DELETED to reach the source');
    assert.equal(notified.length, count + 1, 'the BOOKMARK notified nobody');

    // A label change that stops matching arrives as DELETED from the server.
    api.apply(fakeService({ namespace: 'agents', name: 'billing', labels: {}, ports: [{ name: 'a2a', port: 8443 }] }));
    await api.waitFor(() => !names(source.current()).includes('agents/billing'), 'a relabelled Service to disappear');
    assert.equal(lists().length, 1, 'all of this came through one watch, no re-list');
    assert.equal(watchRequests().length, 1);
  });

  test('kubernetes source against a fake API server: a watch closed by the server is re-established from the last resourceVersion', async () => {
    seed();
    const source = make();
    await source.start();
    await api.waitFor(() => api.openWatches === 1, 'the watch to open');
    // A change outside the watched namespace moves the resourceVersion; a BOOKMARK carries it.
    api.apply(fakeService({ namespace: 'elsewhere', name: 'mover', labels: LABELS, ports: [{ port: 80 }] }));
    api.bookmark();
    const bookmarked = api.resourceVersion;
    api.closeWatches(); // the BOOKMARK line is read before the end of the stream
    await api.waitFor(() => watchRequests().length === 2 && api.openWatches === 1, 'the watch to be re-established');
    assert.equal(watchRequests()[1]?.query['resourceVersion'], bookmarked, 'resumed from the BOOKMARK resourceVersion');
    assert.equal(lists().length, 1, 'a clean close needs no re-list');
    api.apply(fakeService({ namespace: 'agents', name: 'after_close', labels: LABELS, ports: [{ port: 8443 }] }));
    await api.waitFor(() => names(source.current()).includes('agents/after_close'), 'an event on the new watch');
    assert.equal(source.current().ok, true);
  });

  test('kubernetes source against a fake API server: a 410 Gone ERROR event triggers a re-list and a new watch', async () => {
    seed();
    const source = make();
    await source.start();
    await api.waitFor(() => api.openWatches === 1, 'the watch to open');
    api.expireWatches();
    await api.waitFor(() => lists().length === 2 && api.openWatches === 1, 're-list and re-watch after 410');
    const rewatch = watchRequests().at(-1);
    assert.equal(rewatch?.query['resourceVersion'], api.resourceVersion);
    assert.equal(alerts('source-watch-error').length, 0, '410 is routine, not alerted');
    api.remove('agents', 'weather');
    await api.waitFor(() => !names(source.current()).includes('agents/weather'), 'events on the new watch');
  });

  test('kubernetes source against a fake API server: a failed re-list keeps the last good list, reports it, and retries with backoff', async () => {
    seed();
    const source = make();
    await source.start();
    const good = source.current();
    assert.ok(good.records.length > 0);
    await api.waitFor(() => api.openWatches === 1, 'the watch to open');
    api.failLists(2, 500);
    api.expireWatches();
    await api.waitFor(() => source.current().ok === false, 'the failed re-list to be reported');
    const failed = source.current();
    assert.equal(failed.records, good.records, 'last good list kept');
    assert.equal(failed.error?.code, 'ERR_FETCH_STATUS');
    assert.equal(failed.error?.status, 500);
    assert.match(failed.error?.message ?? '', /listing Services in namespace agents with labelSelector "a2a.example.com\/agent=true": the API server answered 500: injected list failure/);
    assert.equal(alerts('source-error')[0]?.detail?.['source'], 'cluster');
    await api.waitFor(() => source.current().ok && api.openWatches === 1, 'recovery after backoff');
    assert.equal(lists().length, 4, 'first list, two failures, one success');
    assert.deepEqual(names(source.current()), names(good));
  });

  test('kubernetes source against a fake API server: without a namespace it lists and watches /api/v1/services', async () => {
    seed();
    const source = make({ namespace: undefined });
    await source.start();
    assert.ok(names(source.current()).includes('elsewhere/billing'));
    await api.waitFor(() => api.openWatches === 1, 'the watch to open');
    assert.deepEqual(
      api.requests.map((r) => [r.path, r.watch]),
      [
        ['/api/v1/services', false],
        ['/api/v1/services', true],
      ],
    );
  });

  test('kubernetes source against a fake API server: the periodic resync re-lists and restarts the watch', async () => {
    seed();
    const source = make({ resyncIntervalMs: 80 });
    await source.start();
    await api.waitFor(() => lists().length >= 3 && watchRequests().length >= 3, 'two resyncs, each re-listing and re-watching');
    await api.waitFor(() => api.openWatches === 1, 'exactly one watch open (old ones closed)');
    assert.equal(source.current().ok, true);
  });

  test('kubernetes source against a fake API server: an unreachable API server is a reported failure, not a throw', async () => {
    seed();
    const kc = new KubeConfig();
    kc.loadFromOptions({ ...api.kubeConfigOptions(), clusters: [{ name: 'fake', server: 'http://127.0.0.1:1', skipTLSVerify: true }] });
    const source = make({ kubeConfig: kc });
    const state = await source.refresh();
    assert.equal(state.ok, false);
    assert.equal(state.synced, false);
    assert.equal(state.error?.code, 'ERR_FETCH_NETWORK');
    assert.match(state.error?.url ?? '', /^http:\/\/127\.0\.0\.1:1\/api\/v1\/namespaces\/agents\/services\?labelSelector=/);
  });
});

describe('kubernetes source: options and the optional dependency (no server)', () => {
  test('options are validated at construction, every problem listed', () => {
    try {
      kubernetesSource({ id: 'k', namespace: 'Bad_NS', labelSelector: ' ', kubeConfig: {}, scheme: 'ftp' as 'http', clusterDomain: '-x', resyncIntervalMs: -1 });
      assert.fail('expected ERR_CONFIG_INVALID');
    } catch (err) {
      assert.ok(isDiscoveryError(err));
      assert.equal(err.code, 'ERR_CONFIG_INVALID');
      assert.deepEqual(
        err.problems.map((p) => p.path),
        ['namespace', 'labelSelector', 'kubeConfig', 'scheme', 'clusterDomain', 'resyncIntervalMs'],
      );
    }
  });

  test('a missing @kubernetes/client-node is a clear ERR_CONFIG_INVALID from refresh() and start()', async () => {
    const notInstalled = async () => {
      throw Object.assign(new Error("Cannot find package '@kubernetes/client-node'"), { code: 'ERR_MODULE_NOT_FOUND' });
    };
    const source = kubernetesSource({ id: 'k', labelSelector: 'a=b', importClient: notInstalled });
    for (const call of [() => source.refresh(), () => source.start()]) {
      await assert.rejects(call(), (err: unknown) => {
        assert.ok(isDiscoveryError(err));
        assert.equal(err.code, 'ERR_CONFIG_INVALID');
        assert.match(err.message, /optional dependency @kubernetes\/client-node, which is not installed: run npm install @kubernetes\/client-node@~1\.4\.0/);
        return true;
      });
    }
    await source.close();
    await assert.rejects(loadKubernetesClient(async () => ({})), /does not export KubeConfig, Watch and CoreV1Api/);
    const mod = await loadKubernetesClient();
    assert.equal(typeof mod.Watch, 'function');
  });
});
