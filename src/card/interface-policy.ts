/**
 * The interface policy: every URL inside a card is attacker-chosen (threat T9). We list them
 * all, and judge the ones a client would call (the card's interfaces): they must be `https:`
 * and pass the same host policy as the card's own URL, unless loopback is explicitly exempted
 * for development. Other URLs (provider, documentation, icon, OAuth and OIDC endpoints, `jku`)
 * are reported and never fetched by discovery.
 *
 * A refusal here is a policy refusal (`ERR_INSECURE_INTERFACE`, `ERR_HOST_NOT_ALLOWED`),
 * not a parse error: the card itself may be perfectly well formed.
 */
import type { DiscoveryErrorCode, Problem } from '../errors.js';
import { joinPath } from './safe-json.js';
import { isObj } from './validate.js';

/** Anything that can judge a URL; `HostPolicy` from the fetch module satisfies it. */
export interface UrlJudge {
  check(url: string): { allowed: boolean; code?: DiscoveryErrorCode; reason?: string };
}

export type CardUrlRole = 'interface' | 'provider' | 'documentation' | 'icon' | 'oauth' | 'openid' | 'jku' | 'other';

export interface CardUrl {
  /** JSON path in the card as published. */
  readonly path: string;
  readonly url: string;
  readonly role: CardUrlRole;
  /** Only interfaces are called by a client; everything else is listed, never fetched. */
  readonly called: boolean;
  /** For called URLs: whether the policy admits it (undefined when hosts are not judged). */
  readonly allowed?: boolean;
  readonly reason?: string;
}

export interface InterfacePolicyOptions {
  /** Judges interface hosts. Without it hosts are listed but not judged (https is still required). */
  hostPolicy?: UrlJudge;
  /** Development exemption: `http:` interfaces on loopback hosts are accepted. */
  allowLoopback?: boolean;
}

export interface InterfacePolicyResult {
  urls: CardUrl[];
  problems: Problem[];
  code?: DiscoveryErrorCode;
}

/** Lists every URL in a raw card and judges its interfaces. */
export function applyInterfacePolicy(raw: Record<string, unknown>, options: InterfacePolicyOptions): InterfacePolicyResult {
  const urls: CardUrl[] = [];
  const problems: Problem[] = [];
  let code: DiscoveryErrorCode | undefined;

  for (const found of collectUrls(raw)) {
    if (found.role !== 'interface') {
      urls.push({ ...found, called: false });
      continue;
    }
    const verdict = judgeInterface(found.url, options);
    urls.push({ ...found, called: true, ...verdict.entry });
    if (verdict.problem) {
      problems.push({ path: found.path, message: verdict.problem.message });
      code ??= verdict.problem.code;
    }
  }
  return { urls, problems, ...(code !== undefined && { code }) };
}

function judgeInterface(
  url: string,
  options: InterfacePolicyOptions,
): { entry: { allowed?: boolean; reason?: string }; problem?: { code: DiscoveryErrorCode; message: string } } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { entry: { allowed: false, reason: 'not a URL' }, problem: { code: 'ERR_INSECURE_INTERFACE', message: `${url} is not a URL` } };
  }
  if (options.hostPolicy === undefined) {
    const loopbackOk = options.allowLoopback === true && isLoopbackHostname(parsed.hostname);
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopbackOk)) {
      const reason = `the interface ${url} is not https:; clients only call interfaces over TLS`;
      return { entry: { allowed: false, reason }, problem: { code: 'ERR_INSECURE_INTERFACE', message: reason } };
    }
    if (parsed.username !== '' || parsed.password !== '') {
      const reason = `the interface ${parsed.host} carries a user name or password in its URL`;
      return { entry: { allowed: false, reason }, problem: { code: 'ERR_INSECURE_INTERFACE', message: reason } };
    }
    return { entry: {} };
  }
  // With a host policy, it alone judges scheme, credentials in the URL and host.
  const verdict = options.hostPolicy.check(url);
  if (verdict.allowed) return { entry: { allowed: true } };
  const reason = verdict.reason ?? `${parsed.origin} is not on the allowlist`;
  return {
    entry: { allowed: false, reason },
    problem: { code: verdict.code === 'ERR_INSECURE_URL' ? 'ERR_INSECURE_INTERFACE' : (verdict.code ?? 'ERR_HOST_NOT_ALLOWED'), message: reason },
  };
}

/** localhost, 127.0.0.0/8 and ::1: the hosts the development exemption covers. */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '[::1]' || h === '::1';
}

interface FoundUrl {
  path: string;
  url: string;
  role: CardUrlRole;
}

const INTERFACE_PATHS = [/^url$/, /^additionalInterfaces\[\d+\]\.url$/, /^supportedInterfaces\[\d+\]\.url$/];

/** Every string under a key named like a URL (`url`, `*Url`, `jku`), plus `jku` in signature headers. */
function collectUrls(raw: Record<string, unknown>): FoundUrl[] {
  const out: FoundUrl[] = [];
  // Recursion is safe: safe-json.ts has already bounded the depth.
  const visit = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => visit(v, `${path}[${i}]`));
    } else if (isObj(value)) {
      for (const [key, child] of Object.entries(value)) {
        const p = joinPath(path, key);
        if (typeof child === 'string' && (key === 'url' || key.endsWith('Url') || key === 'jku')) {
          out.push({ path: p, url: child, role: roleOf(p, key) });
        } else {
          visit(child, p);
        }
      }
    }
  };
  visit(raw, '$');
  const sigs = raw.signatures;
  if (Array.isArray(sigs)) {
    sigs.forEach((sig, i) => {
      if (!isObj(sig) || typeof sig.protected !== 'string') return;
      const header = decodeProtectedHeader(sig.protected);
      if (header && typeof header.jku === 'string') out.push({ path: `signatures[${i}].protected.jku`, url: header.jku, role: 'jku' });
    });
  }
  return out;
}

function roleOf(path: string, key: string): CardUrlRole {
  if (INTERFACE_PATHS.some((re) => re.test(path))) return 'interface';
  if (path === 'provider.url') return 'provider';
  if (key === 'documentationUrl') return 'documentation';
  if (key === 'iconUrl') return 'icon';
  if (key === 'openIdConnectUrl') return 'openid';
  if (key === 'jku') return 'jku';
  if (/^securitySchemes/.test(path)) return 'oauth';
  return 'other';
}

function decodeProtectedHeader(b64: string): Record<string, unknown> | undefined {
  if (b64.length > 8192) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(b64, 'base64url').toString('utf8'));
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
