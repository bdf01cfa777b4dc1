/**
 * `a2a-discovery probe <target>`: what it prints (its flags and help: commands/probe.ts). The target is a card or
 * AI Catalog file (probe.ts), an http(s) URL or a `dns:` name (probe-url.ts); the report is printed
 * as text or, with `--json`, as one JSON object. Exits 0 when accepted, 1 when refused.
 *
 * @module
 */
import type { SignatureMode } from 'a2a-discovery';
import { renderAiCatalogProbe, renderDnsProbe, renderProbe } from 'a2a-discovery/probe';
import { credentialsFromConfig, probeFile } from './probe.js';
import { probeDnsTarget, probeUrlTarget } from './probe-url.js';
import type { Io } from './flags.js';

/** The flags as commander parses them. */
export interface ProbeFlags {
  allow: string[];
  allowLoopback: boolean;
  signatureMode: SignatureMode;
  trustKey: string[];
  maxBytes?: number;
  timeoutMs?: number;
  config?: string;
  resolver: string[];
  requireDnssec: boolean;
  json: boolean;
}

/** Probes the target (a `dns:` name, an http(s) URL or a file), prints the report and sets the exit code. */
export async function runProbe(target: string, opts: ProbeFlags, io: Io): Promise<void> {
  const common = {
    allow: opts.allow,
    allowLoopback: opts.allowLoopback,
    signatureMode: opts.signatureMode,
    trustKeys: opts.trustKey,
    ...(opts.maxBytes !== undefined && { maxBytes: opts.maxBytes }),
    ...(opts.config !== undefined && { credentials: await credentialsFromConfig(opts.config) }),
  };
  const timeout = opts.timeoutMs !== undefined ? { totalTimeoutMs: opts.timeoutMs } : {};
  if (/^dns:/i.test(target)) {
    const dns = await probeDnsTarget(target, { ...common, ...timeout, resolvers: opts.resolver, requireDnssec: opts.requireDnssec });
    io.out(opts.json ? `${JSON.stringify(dns, null, 2)}\n` : `${renderDnsProbe(dns)}\n`);
    process.exitCode = dns.accepted ? 0 : 1;
    return;
  }
  const result = /^https?:\/\//i.test(target) ? await probeUrlTarget(target, { ...common, ...timeout }) : await probeFile(target, { ...common, ...timeout });
  const report = result.kind === 'card' ? result.report : result.catalog;
  const text = result.kind === 'card' ? renderProbe(result.report) : renderAiCatalogProbe(result.catalog);
  io.out(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${text}\n`);
  process.exitCode = report.accepted ? 0 : 1;
}
