/**
 * `server.telemetry.traceUrl`: a trace viewer's URL template, checked when the configuration is
 * read (an http(s) URL with `{traceId}` in it, no credentials), handed to the service, and told by
 * `/api/whoami` to whoever may read the API (the dashboard builds its links from it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { serviceOptionsFromConfig } from '../../packages/service/src/assembly/from-config.js';
import { startService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';

const BASE = `allow: [https://billing.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
needs: [{ tag: billing }]
static: [{ name: billing_agent, url: "https://billing.example.com/", description: Bills., tags: [billing] }]
`;

const withTraceUrl = (value: string) => `server:\n  telemetry:\n    traceUrl: ${JSON.stringify(value)}\n${BASE}`;

function problem(text: string): string {
  try {
    parseConfig(text, { file: 'test.yaml' });
  } catch (err) {
    assert.ok(isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID', String(err));
    const p = err.problems.find((x) => x.path === 'server.telemetry.traceUrl');
    assert.ok(p, `a problem at server.telemetry.traceUrl: ${err.message}`);
    return `${p.line}:${p.column} ${p.message}`;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

test('a template with {traceId} is kept and reaches the service; without one, none', () => {
  for (const template of ['https://jaeger.example/trace/{traceId}', 'http://grafana.internal:3000/explore?left={"queries":[{"query":"{traceId}"}]}']) {
    const config = parseConfig(withTraceUrl(template), { file: 'test.yaml' });
    assert.equal(config.server.telemetry.traceUrl, template);
    assert.equal(serviceOptionsFromConfig(config, { keys: [], credentials: () => undefined }).traceUrl, template);
  }
  const plain = parseConfig(BASE, { file: 'test.yaml' });
  assert.deepEqual(plain.server.telemetry, {});
  assert.equal('traceUrl' in serviceOptionsFromConfig(plain, { keys: [], credentials: () => undefined }), false);
});

test('a template without {traceId}, not http(s), with credentials, or not a URL is refused at its line', () => {
  assert.match(problem(withTraceUrl('https://jaeger.example/trace/')), /^3:15 must contain \{traceId\}/);
  assert.match(problem(withTraceUrl('javascript:alert({traceId})')), /must be an http\(s\) URL/);
  assert.match(problem(withTraceUrl('https://user:pw@jaeger.example/trace/{traceId}')), /without credentials/);
  assert.match(problem(withTraceUrl('/trace/{traceId}')), /must be an absolute http\(s\) URL/);
});

test('/api/whoami tells the template to a caller who may read, not to one who may not', async () => {
  const token = 'trace-url-test-token-0123456789';
  const service = await startService({ port: 0, token, traceUrl: 'https://jaeger.example/trace/{traceId}', policy: { allow: [] }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }) });
  try {
    const whoami = async (headers: Record<string, string>) => {
      const res = await fetch(`${service.url}/api/whoami`, { headers });
      return { status: res.status, ...((await res.json()) as { role?: string | null; traceUrl?: string }) };
    };
    const admin = await whoami({ authorization: `Bearer ${token}` });
    assert.equal(admin.traceUrl, 'https://jaeger.example/trace/{traceId}');
    const anonymous = await whoami({});
    assert.equal(anonymous.status, 401);
    assert.equal('traceUrl' in anonymous, false, 'the viewer\'s address is not told to a caller who may read nothing');
  } finally {
    await service.close();
  }
});
