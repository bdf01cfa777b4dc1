/**
 * `a2a-discovery eval-routing --config <file> [--cases <file>] [--url <service> [--digest <d>]] [--json]`:
 * routing accuracy of a snapshot on labelled cases (the vocabulary's examples, `routing.cases`,
 * and `--cases`), with a confusion table and every fallback. The snapshot is the one the
 * configuration would build with stand-in peers (default, offline), or a running service's
 * current or retained one.
 */
import { loadConfig, resolveSecrets, type DiscoveryConfig } from 'a2a-discovery/config';
import { DiscoveryError, isDiscoveryError } from 'a2a-discovery';
import { createDeploymentFetch } from 'a2a-discovery/internal';
import type { Snapshot } from 'a2a-discovery';
import type { RoutingCase, RoutingReport } from 'a2a-discovery/routing';

/** The flags as commander parses them (commands/eval-routing.ts). */
export interface EvalRoutingFlags {
  config: string;
  cases?: string;
  url?: string;
  digest?: string;
  minAccuracy?: number;
  json: boolean;
}

/** Evaluates routing as the flags say; resolves to the report. */
export async function evalRouting(flags: EvalRoutingFlags, env: NodeJS.ProcessEnv = process.env): Promise<{ report: RoutingReport; source: string }> {
  // ADK loads with the routing evaluation, when the command runs (never for its --help).
  const { casesFromVocabulary, evaluateRouting, loadCases, standInPeers, standInSnapshot } = await import('a2a-discovery/routing');
  const config = await loadConfig(flags.config);
  const cases: RoutingCase[] = [
    ...casesFromVocabulary(config.vocabulary),
    ...(config.routing.cases !== undefined ? await loadCases(config.routing.cases) : []),
    ...(flags.cases !== undefined ? await loadCases(flags.cases) : []),
  ];
  if (cases.length === 0) {
    throw new DiscoveryError('ERR_USAGE', 'there are no cases to evaluate: give the vocabulary examples, routing.cases, or --cases', { stage: 'config' });
  }
  if (flags.digest !== undefined && flags.url === undefined) throw new DiscoveryError('ERR_USAGE', '--digest needs --url (the service that retains the snapshot)', { stage: 'config' });
  const stood = (): Snapshot => standInSnapshot(standInPeers(config), { vocabulary: config.vocabulary, needs: config.needs, maxAgents: config.policies.maxAgents, domains: config.domains });
  const { snapshot, source } = flags.url !== undefined ? await fetchSnapshot(config, flags.url, flags.digest, env) : { snapshot: stood(), source: 'stand-in peers built from the configuration' };
  const root = config.root;
  const report = await evaluateRouting(snapshot, {
    root:
      root.kind === 'model'
        ? { kind: 'model', model: root.model, rootName: root.name }
        : {
            kind: 'routed',
            hints: config.vocabulary.map((v) => ({ tag: v.tag, ...(v.keywords && { keywords: v.keywords }), ...(v.examples && { examples: v.examples }) })),
            ...(root.fallback !== undefined && { fallback: root.fallback }),
          },
    cases,
    tags: config.vocabulary.map((v) => v.tag),
    minAccuracy: flags.minAccuracy ?? config.routing.minAccuracy,
  });
  return { report, source };
}

/** A snapshot's JSON carries every agent's card (each ≤ 64 KiB by default): 32 MiB is room for hundreds. */
const MAX_SNAPSHOT_BYTES = 32 * 1024 * 1024;

/** The service's current snapshot, or a retained one by digest, through its API. */
async function fetchSnapshot(config: DiscoveryConfig, url: string, digest: string | undefined, env: NodeJS.ProcessEnv): Promise<{ snapshot: Snapshot; source: string }> {
  const secrets = await resolveSecrets(config, env);
  const base = url.replace(/\/+$/, '');
  const target = digest !== undefined ? `${base}/api/snapshots/${encodeURIComponent(digest)}` : `${base}/api/snapshot`;
  if (!URL.canParse(target)) throw new DiscoveryError('ERR_USAGE', `--url ${JSON.stringify(url)} is not an http(s) URL`, { stage: 'config' });
  // The operator's own service, through the guarded fetch (no redirects, its addresses judged, the answer bounded).
  const service = createDeploymentFetch({ origin: new URL(target).origin, timeoutMs: 10_000, maxResponseBytes: MAX_SNAPSHOT_BYTES, maxResponseName: 'the snapshot cap' });
  let res: Response;
  let bytes: Buffer;
  try {
    res = await service(target, { headers: { accept: 'application/json', ...(secrets.token !== undefined && { authorization: `Bearer ${secrets.token}` }) } });
    bytes = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    if (isDiscoveryError(err) && err.code === 'ERR_BODY_TOO_LARGE') throw new DiscoveryError('ERR_USAGE', `${target} answered more than ${MAX_SNAPSHOT_BYTES} bytes; that is not a snapshot of this service`, { stage: 'config', cause: err });
    throw new DiscoveryError('ERR_USAGE', `cannot read ${target}: ${err instanceof Error ? err.message : String(err)}`, { stage: 'config', cause: err });
  } finally {
    await service.close();
  }
  if (!res.ok) throw new DiscoveryError('ERR_USAGE', `${target} answered ${res.status}${res.status === 404 ? ' (no such snapshot, or none published yet)' : ''}`, { stage: 'config' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new DiscoveryError('ERR_USAGE', `${target} did not answer JSON`, { stage: 'config' });
  }
  const body = parsed as {
    version: number;
    digest: string;
    createdAt?: string;
    agents: Array<{ localName: string; description: string; tags: string[]; critical: boolean; domain?: string }>;
    domains?: Array<{ name: string; description: string; agents: string[] }>;
  };
  // Routing reads names, descriptions, tags, criticality and the layout; nothing else is needed.
  const snapshot = {
    version: body.version,
    digest: body.digest,
    createdAt: body.createdAt !== undefined ? Date.parse(body.createdAt) : 0,
    agents: body.agents.map((a) => ({ localName: a.localName, description: a.description, tags: a.tags, critical: a.critical, ...(a.domain !== undefined && { domain: a.domain }) })),
    ...(body.domains && { domains: body.domains }),
  } as unknown as Snapshot;
  return { snapshot, source: `${digest !== undefined ? 'retained' : 'current'} snapshot of ${base}` };
}
