/**
 * The HTTP API's OpenAPI document, committed as `docs/openapi.json` so that a change of the API
 * shows in review, the way the packages' API reports do (scripts/api-report.mjs).
 *
 *   npm run openapi:update   rewrite docs/openapi.json from a service with every route mounted
 *   npm run openapi:check    fail (exit 1) when docs/openapi.json differs (CI: inside api:check)
 *
 * The document is the one the service serves at `GET /openapi.json`, generated from the route
 * declarations (packages/service/src/http/route.ts): this script starts a service on loopback
 * with every optional route family on (AI Catalog, registry and its MCP tools, the A2A
 * endpoint), asks it, and stops it. test/openapi/ checks the served document against the
 * committed one and validates the service's answers against it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startService } from '../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../packages/service/src/index.js';
import { createLogger } from '../packages/service/src/telemetry/logger.js';

export const OPENAPI_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

/** A service with every route family mounted (and `extra` on top), on loopback port 0. */
export function fullService(extra: Partial<ServiceOptions> = {}): Promise<RunningService> {
  return startService({
    port: 0,
    policy: { allow: [], allowLoopback: true },
    vocabulary: [],
    needs: [],
    catalog: { enabled: true },
    logger: createLogger({ level: 'silent' }),
    ...extra,
  });
}

/** The document `service` serves, as the committed file spells it (two-space JSON, final newline). */
export async function servedDocument(service: RunningService): Promise<string> {
  const res = await fetch(`${service.url}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  return `${JSON.stringify(await res.json(), null, 2)}\n`;
}

async function main(): Promise<void> {
  const service = await fullService();
  try {
    const served = await servedDocument(service);
    if (process.argv.includes('--update')) {
      writeFileSync(OPENAPI_FILE, served);
      console.log('wrote docs/openapi.json');
      return;
    }
    let committed = '';
    try {
      committed = readFileSync(OPENAPI_FILE, 'utf8');
    } catch {
      // Missing: differs.
    }
    if (committed !== served) {
      console.error('docs/openapi.json differs from the document the service serves: run `npm run openapi:update` and commit it');
      process.exitCode = 1;
    } else console.log('unchanged docs/openapi.json');
  } finally {
    await service.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
