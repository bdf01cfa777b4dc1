/**
 * `a2a-discovery probe` without `--allow` lists each interface with its real scheme: a plain-HTTP
 * loopback interface (what a local peer serves) is not labelled "https", and nothing says a host
 * was judged when none was.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderProbe } from '../../packages/core/src/probe/index.js';
import type { ProbeReport } from '../../packages/core/src/probe/index.js';

test('interfaces are labelled with their own scheme when no allowlist judged them', () => {
  const report: ProbeReport = {
    source: 'http://127.0.0.1:4101/.well-known/agent-card.json',
    accepted: true,
    stage: 'selected',
    selection: { selected: true },
    protocolVersion: '1.0',
    problems: [],
    warnings: [],
    skills: [],
    hostsJudged: false,
    urls: [
      { path: 'supportedInterfaces[0].url', url: 'http://127.0.0.1:4101/a2a', role: 'interface', binding: 'JSONRPC', called: true },
      { path: 'supportedInterfaces[1].url', url: 'https://warranty.example.com/a2a', role: 'interface', binding: 'JSONRPC', called: true },
    ],
  };
  const text = renderProbe(report);
  assert.match(text, /hosts listed, not judged/);
  assert.match(text, /http:\/\/127\.0\.0\.1:4101\/a2a {2}\(http, host not judged\)/);
  assert.match(text, /https:\/\/warranty\.example\.com\/a2a {2}\(https, host not judged\)/);
});
