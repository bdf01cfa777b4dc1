/**
 * `a2a-discovery doctor --config <file>`: what a new operator gets wrong, checked in order, one
 * line each (`ok|warn|fail  <check>  <what was found and what to do>`): the configuration
 * (validate's own check), the store (read through the store's backup reader, never written),
 * the token file's permissions, the port, http:/loopback URLs without allowLoopback, URLs the
 * allowlist does not admit, the OIDC issuer's discovery document, each source's reachability (one
 * guarded, bounded request each, within one total deadline) and the clock against their `Date`.
 * Exit 0 with no fail, 1 with any.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostPolicy, isDiscoveryError } from 'a2a-discovery';
import { CARD_PATH, createGuardedFetch, createOriginFetch, isLoopbackHost } from 'a2a-discovery/internal';
import type { GuardedFetch } from 'a2a-discovery/internal';
import type { DiscoveryConfig } from 'a2a-discovery/config';
import { validateConfigFile } from './validate.js';
import { VERSION } from '../version.js';
import { DOCTOR_BOUNDS } from './flags.js';

type CheckStatus = 'ok' | 'warn' | 'fail';

/** One check: the `--json` contract's `checks[]`. */
export interface DoctorCheck {
  id: string;
  status: CheckStatus;
  message: string;
  detail?: Record<string, unknown>;
}

/** Sources asked at most (the rest counted, not asked). */
const MAX_TARGETS = 50;
const MAX_RESPONSE_BYTES = 256 * 1024;

/** A configured URL the service will fetch, and where it was configured. */
interface Target {
  path: string;
  url: string;
}

/** Every URL the configuration makes the service fetch: static entries, well-known domains, catalogs, registries, ARD sources. */
function targetsOf(config: DiscoveryConfig): Target[] {
  const out: Target[] = [];
  config.static.forEach((s, i) => {
    if (s.cardUrl !== undefined) out.push({ path: `static[${i}].cardUrl`, url: s.cardUrl });
    // A base URL: its card is at the well-known path, as the service fetches it.
    else if (s.url !== undefined) out.push({ path: `static[${i}].url`, url: cardUrlOf(s.url) });
  });
  config.sources.wellKnown?.domains.forEach((d, i) => out.push({ path: `sources.wellKnown.domains[${i}]`, url: `https://${d}/${CARD_PATH}` }));
  config.sources.aiCatalogs.forEach((c, i) => {
    c.catalogs.forEach((u, j) => out.push({ path: `sources.aiCatalogs[${i}].catalogs[${j}]`, url: u }));
    c.domains.forEach((d, j) => out.push({ path: `sources.aiCatalogs[${i}].domains[${j}]`, url: `https://${d}/.well-known/ai-catalog.json` }));
  });
  config.sources.registries.forEach((r, i) => out.push({ path: `sources.registries[${i}].url`, url: r.url }));
  config.sources.ard.forEach((a, i) => out.push({ path: `sources.ard[${i}].url`, url: a.url }));
  return out;
}

/** The card URL of a base URL (the well-known path under it). */
function cardUrlOf(base: string): string {
  try {
    return new URL(CARD_PATH.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`).href;
  } catch {
    return base;
  }
}

function isLoopbackUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return isLoopbackHost(u.hostname) || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** Whether something listens on host:port already (a bind attempt, released at once). */
function portInUse(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** The error class of a failed request, for the report: the DiscoveryError's code, else the error's name. */
function errorClass(err: unknown): string {
  if (isDiscoveryError(err)) return err.code;
  return err instanceof Error ? err.name : 'Error';
}

/** Runs every check; `now` the wall clock (injected). */
export async function runDoctor(file: string, deps: { now?: () => number; env?: NodeJS.ProcessEnv } = {}): Promise<DoctorCheck[]> {
  const now = deps.now ?? Date.now;
  const checks: DoctorCheck[] = [];
  const report = await validateConfigFile(file, deps.env);
  if (!report.valid || report.config === undefined) {
    checks.push({ id: 'config', status: 'fail', message: `${report.problems.length} problem(s): ${report.problems.map((p) => `${p.path}: ${p.message}`).join('; ')} — fix them (a2a-discovery validate --config ${file} shows each with its line)`, detail: { problems: report.problems.map((p) => ({ path: p.path, message: p.message })) } });
    if (report.config === undefined) return checks;
  } else {
    checks.push({ id: 'config', status: 'ok', message: `${file} parses and validates, its secrets are readable` });
  }
  const config = report.config;
  checks.push(await storeCheck(config));
  checks.push(await tokenFileCheck(config));
  const inUse = await portInUse(config.server.host, config.server.port);
  checks.push(
    inUse === undefined
      ? { id: 'port', status: 'ok', message: `${config.server.host}:${config.server.port} is free` }
      : { id: 'port', status: 'fail', message: `${config.server.host}:${config.server.port} cannot be bound (${inUse.code ?? inUse.message}): stop what listens there or set server.port`, detail: { host: config.server.host, port: config.server.port, code: inUse.code } },
  );

  const targets = targetsOf(config);
  const loopback = targets.filter((t) => isLoopbackUrl(t.url));
  checks.push(
    loopback.length > 0 && !config.allowLoopback
      ? { id: 'loopback', status: 'fail', message: `${loopback.map((t) => `${t.path} ${t.url}`).join(', ')}: http: or loopback URLs are refused without allowLoopback: use https and a public host, or set allowLoopback: true (development only)`, detail: { urls: loopback } }
      : { id: 'loopback', status: loopback.length > 0 ? 'warn' : 'ok', message: loopback.length > 0 ? `allowLoopback is on and ${loopback.length} URL(s) use it: development only` : 'no http: or loopback URL' },
  );
  const policy = HostPolicy.from({ allow: [...config.allow], allowLoopback: config.allowLoopback, allowCidrs: [...config.allowCidrs] });
  const refused = targets.filter((t) => !(config.allowLoopback === false && isLoopbackUrl(t.url))).flatMap((t) => {
    const verdict = policy.check(t.url);
    return verdict.allowed ? [] : [{ ...t, reason: verdict.reason }];
  });
  checks.push(
    refused.length > 0
      ? { id: 'allowlist', status: 'fail', message: `${refused.map((t) => `${t.path} ${t.url}: ${t.reason}`).join('; ')} — add its origin to allow:`, detail: { refused } }
      : { id: 'allowlist', status: 'ok', message: `every configured URL (${targets.length}) is admitted by allow:` },
  );

  const deadline = AbortSignal.timeout(DOCTOR_BOUNDS.totalDeadlineMs);
  const dates: Array<{ url: string; skewMs: number }> = [];
  if (config.server.oidc !== undefined) checks.push(await oidcCheck(config, deadline, now, dates));

  const asked = targets.filter((t) => policy.check(t.url).allowed).slice(0, MAX_TARGETS);
  const fetch = createGuardedFetch({ policy, timeoutMs: DOCTOR_BOUNDS.requestTimeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, read: 'whole', userAgent: `a2a-discovery-doctor/${VERSION}` });
  try {
    const results = await Promise.all(
      asked.map(async (t) => {
        try {
          const res = await fetch(t.url, { headers: { accept: 'application/json' }, signal: deadline });
          const date = Date.parse(res.headers.get('date') ?? '');
          if (Number.isFinite(date)) dates.push({ url: t.url, skewMs: now() - date });
          return { ...t, status: res.status };
        } catch (err) {
          return { ...t, error: errorClass(err), message: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
    for (const r of results) {
      const id = `reach:${r.path}`;
      if ('status' in r) {
        checks.push(r.status === 200 ? { id, status: 'ok', message: `${r.url} answered 200`, detail: { url: r.url, status: r.status } } : { id, status: 'warn', message: `${r.url} answered ${r.status}: check the URL (the service will retry and mark it unhealthy)`, detail: { url: r.url, status: r.status } });
      } else {
        checks.push({ id, status: 'fail', message: `${r.url}: ${r.error}: ${r.message} — check the host, the network and the firewall`, detail: { url: r.url, error: r.error } });
      }
    }
    if (targets.length > asked.length + refused.length) checks.push({ id: 'reach', status: 'warn', message: `only the first ${MAX_TARGETS} sources were asked` });
  } finally {
    await fetch.close();
  }
  for (const d of config.sources.dns) checks.push({ id: `reach:sources.dns.${d.id}`, status: 'warn', message: `resolvers ${d.resolvers.join(', ')} not checked by doctor: try a2a-discovery probe dns:<domain> --resolver <address>` });

  const worst = dates.reduce<{ url: string; skewMs: number } | undefined>((w, d) => (w === undefined || Math.abs(d.skewMs) > Math.abs(w.skewMs) ? d : w), undefined);
  checks.push(
    worst === undefined
      ? { id: 'clock', status: 'warn', message: 'no reachable source sent a Date header: the clock was not compared' }
      : Math.abs(worst.skewMs) > DOCTOR_BOUNDS.maxSkewMs
        ? { id: 'clock', status: 'warn', message: `the local clock is ${(worst.skewMs / 1000).toFixed(1)} s ${worst.skewMs > 0 ? 'ahead of' : 'behind'} ${worst.url}: run NTP (token and signature times depend on it)`, detail: { url: worst.url, skewMs: worst.skewMs } }
        : { id: 'clock', status: 'ok', message: `within ${(DOCTOR_BOUNDS.maxSkewMs / 1000).toFixed(0)} s of ${dates.length} source(s)`, detail: { url: worst.url, skewMs: worst.skewMs } },
  );
  return checks;
}

async function storeCheck(config: DiscoveryConfig): Promise<DoctorCheck> {
  const { parseStoreSpec, sqliteFilePath } = await import('a2a-discovery/config');
  const spec = parseStoreSpec(config.store);
  if ('problem' in spec) return { id: 'store', status: 'fail', message: `store: ${spec.problem}` };
  if (spec.kind !== 'sqlite' || spec.file === ':memory:') return { id: 'store', status: spec.kind === 'postgres' ? 'warn' : 'ok', message: spec.kind === 'postgres' ? 'a PostgreSQL store: not opened by doctor (a2a-discovery backup reads it)' : 'an in-memory store: nothing survives a restart' };
  const path = sqliteFilePath(spec.file, config.dataDir);
  const exists = await stat(path).then(() => true, () => false);
  if (!exists) {
    const dir = await stat(config.dataDir).then((s) => s.isDirectory(), () => false);
    return dir ? { id: 'store', status: 'ok', message: `${path} does not exist yet: serve creates it` } : { id: 'store', status: 'warn', message: `dataDir ${config.dataDir} does not exist: serve creates it (check its parent is writable)` };
  }
  // The store's own reader: a consistent copy into a temporary folder (the store is not written), its schema read.
  const { backupSqliteStore } = await import('@a2a-discovery/store');
  const tmp = await mkdtemp(join(tmpdir(), 'a2a-doctor-'));
  try {
    const copy = await backupSqliteStore(path, join(tmp, 'copy.sqlite'));
    return { id: 'store', status: 'ok', message: `${path} opens; schema ${copy.schema}`, detail: { file: path, schema: copy.schema } };
  } catch (err) {
    return { id: 'store', status: 'fail', message: `${path}: ${err instanceof Error ? err.message : String(err)}`, detail: { file: path, error: errorClass(err) } };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function tokenFileCheck(config: DiscoveryConfig): Promise<DoctorCheck> {
  const file = config.server.tokenFile;
  if (file === undefined) return { id: 'token-file', status: 'ok', message: config.server.tokenEnv !== undefined ? `the token is read from $${config.server.tokenEnv}` : 'no token file' };
  const info = await stat(file).catch(() => undefined);
  if (info === undefined) return { id: 'token-file', status: 'fail', message: `${file} cannot be read` };
  const mode = info.mode & 0o777;
  return (mode & 0o077) !== 0
    ? { id: 'token-file', status: 'warn', message: `${file} is readable by others (mode ${mode.toString(8)}): chmod 600 ${file}`, detail: { file, mode: mode.toString(8) } }
    : { id: 'token-file', status: 'ok', message: `${file} is private (mode ${mode.toString(8)})`, detail: { file, mode: mode.toString(8) } };
}

async function oidcCheck(config: DiscoveryConfig, deadline: AbortSignal, now: () => number, dates: Array<{ url: string; skewMs: number }>): Promise<DoctorCheck> {
  const issuer = config.server.oidc!.issuer;
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let fetch: GuardedFetch | undefined;
  try {
    fetch = createOriginFetch({ origins: [new URL(issuer).origin], allowLoopback: config.allowLoopback, timeoutMs: DOCTOR_BOUNDS.requestTimeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES });
    const res = await fetch(url, { signal: deadline });
    const date = Date.parse(res.headers.get('date') ?? '');
    if (Number.isFinite(date)) dates.push({ url, skewMs: now() - date });
    if (res.status !== 200) return { id: 'oidc', status: 'fail', message: `${url} answered ${res.status}: people cannot sign in; check server.oidc.issuer`, detail: { url, status: res.status } };
    return { id: 'oidc', status: 'ok', message: `${url} answered 200`, detail: { url, status: 200 } };
  } catch (err) {
    return { id: 'oidc', status: 'fail', message: `${url}: ${errorClass(err)}: ${err instanceof Error ? err.message : String(err)} — people cannot sign in; check server.oidc.issuer and the network`, detail: { url, error: errorClass(err) } };
  } finally {
    await fetch?.close();
  }
}
