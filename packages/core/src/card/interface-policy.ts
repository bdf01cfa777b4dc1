/**
 * The interface policy: every URL inside a card is attacker-chosen (threat T9). We list them
 * all, and judge the ones a client would call: the card's JSONRPC and HTTP+JSON interfaces.
 * They must be `https:` and pass the same host policy as the card's own URL, unless loopback
 * is explicitly exempted for development. Interfaces no client here calls (gRPC, bindings we do
 * not know, `host:port` targets with no scheme) are listed as not called, with a warning, and
 * not judged. Other URLs (provider, documentation, icon, OAuth and OIDC endpoints, `jku`) are
 * reported and never fetched by discovery.
 *
 * A refusal here is a policy refusal (`ERR_INSECURE_INTERFACE`, `ERR_HOST_NOT_ALLOWED`),
 * not a parse error: the card itself may be perfectly well formed.
 */
import type { DiscoveryErrorCode, Problem } from '../errors.js';
import { specialPurposeBlock } from '../rules/special-purpose-addresses.js';
import { isLoopbackHost } from '../rules/origins.js';
import type { AgentCardModel } from './model.js';
import { joinPath } from './safe-json.js';
import { isHostPortTarget, isObj } from './validate.js';
import { frozenCopy } from '../rules/frozen.js';

/** Anything that can judge a URL; `HostPolicy` from the fetch module satisfies it. */
export interface UrlJudge {
  check(url: string): { allowed: boolean; code?: DiscoveryErrorCode; reason?: string };
}

type CardUrlRole = 'interface' | 'provider' | 'documentation' | 'icon' | 'oauth' | 'openid' | 'jku' | 'other';

export interface CardUrl {
  /** JSON path in the card as published. */
  readonly path: string;
  readonly url: string;
  readonly role: CardUrlRole;
  /** Only JSONRPC and HTTP+JSON interfaces are called by a client; everything else is listed, never fetched. */
  readonly called: boolean;
  /** For interfaces: the binding (0.3 `transport`) the card declares. */
  readonly binding?: string;
  /** For called URLs: whether the policy admits it (undefined when hosts are not judged). */
  readonly allowed?: boolean;
  /** Why a called URL is refused, or why an interface is not called. */
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
  /** Interfaces that are not called, and a card with no interface a client here can call. */
  warnings: Problem[];
  code?: DiscoveryErrorCode;
}

/** The bindings the A2A clients here (ADK's 0.3 client, the 1.x client) call. */
const CALLED_BINDINGS = new Set(['JSONRPC', 'HTTP+JSON']);

/** Why an interface is never called, or undefined when a client would call it. */
function notCalledReason(binding: string, url: string): string | undefined {
  // ADK's 0.3 client factory compares transports case-insensitively: so do we, to judge more, not less.
  if (!CALLED_BINDINGS.has(binding.toUpperCase())) {
    return binding.toUpperCase() === 'GRPC' ? 'gRPC interfaces are never called by this client' : `the binding ${JSON.stringify(binding)} is not one this client speaks (JSONRPC, HTTP+JSON)`;
  }
  if (isHostPortTarget(url)) return 'a host:port target with no scheme is not a URL this client can call';
  return undefined;
}

/** Lists every URL in a raw card and judges the interfaces a client would call. */
export function applyInterfacePolicy(raw: Record<string, unknown>, options: InterfacePolicyOptions): InterfacePolicyResult {
  const urls: CardUrl[] = [];
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  let code: DiscoveryErrorCode | undefined;
  let called = 0;
  let interfaces = 0;

  for (const found of collectUrls(raw)) {
    if (found.role !== 'interface') {
      urls.push({ path: found.path, url: found.url, role: found.role, called: false });
      continue;
    }
    interfaces++;
    const binding = found.binding ?? 'JSONRPC';
    const skip = notCalledReason(binding, found.url);
    if (skip !== undefined) {
      urls.push({ path: found.path, url: found.url, role: 'interface', called: false, binding, reason: skip });
      warnings.push({ path: found.path, message: `${found.url} (${binding}) is not called: ${skip}; it is listed and not judged` });
      continue;
    }
    called++;
    const unroutable = unroutableHost(found.url);
    if (unroutable !== undefined) {
      // Nobody can call it, and nothing is guessed: the card is kept, the interface is never
      // called as it stands; selection refuses it unless a static entry's interfaceUrl says where
      // the agent answers.
      const reason = `${unroutable}: no client can call ${found.url}; a static entry's interfaceUrl can name where the agent answers`;
      urls.push({ path: found.path, url: found.url, role: 'interface', called: true, binding, allowed: false, reason });
      warnings.push({ path: found.path, message: reason });
      continue;
    }
    const verdict = judgeInterface(found.url, options);
    urls.push({ path: found.path, url: found.url, role: 'interface', called: true, binding, ...verdict.entry });
    if (verdict.problem) {
      problems.push({ path: found.path, message: verdict.problem.message });
      code ??= verdict.problem.code;
    }
  }
  if (interfaces > 0 && called === 0) {
    warnings.push({
      path: Array.isArray(raw.supportedInterfaces) ? 'supportedInterfaces' : 'url',
      message: 'no interface is one this client calls (JSONRPC or HTTP+JSON at an http(s) URL), so the agent cannot be reached from a tree',
    });
  }
  return { urls, problems, warnings, ...(code !== undefined && { code }) };
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
    const loopbackOk = options.allowLoopback === true && isLoopbackHost(parsed.hostname);
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
  let reason = verdict.reason ?? `${parsed.origin} is not on the allowlist`;
  // The one key that admits an interface host: say it, with the exact origin to add.
  if (verdict.code === 'ERR_HOST_NOT_ALLOWED' && parsed.username === '' && parsed.password === '' && (parsed.protocol === 'https:' || parsed.protocol === 'http:')) {
    reason = `the card's interface host is refused: ${reason}; adding "${parsed.origin}" to allow would admit it`;
  }
  return {
    entry: { allowed: false, reason },
    problem: { code: verdict.code === 'ERR_INSECURE_URL' ? 'ERR_INSECURE_INTERFACE' : (verdict.code ?? 'ERR_HOST_NOT_ALLOWED'), message: reason },
  };
}

interface FoundUrl {
  path: string;
  url: string;
  role: CardUrlRole;
  /** For interfaces: the declared binding. */
  binding?: string;
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
          // "" for documentationUrl / iconUrl is absent (the validator warned); nothing to list.
          if (child === '' && (key === 'documentationUrl' || key === 'iconUrl')) continue;
          const role = roleOf(p, key);
          out.push({ path: p, url: child, role, ...(role === 'interface' && { binding: bindingOf(raw, p, value) }) });
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

/** The binding an interface URL at `path` is declared with (`owner` is the object holding it). */
function bindingOf(raw: Record<string, unknown>, path: string, owner: Record<string, unknown>): string {
  const declared = path === 'url' ? raw.preferredTransport : path.startsWith('supportedInterfaces') ? owner.protocolBinding : owner.transport;
  // 0.3: a card with no preferredTransport is JSONRPC (the spec's default, and ADK's).
  return typeof declared === 'string' ? declared : 'JSONRPC';
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

/** The interface a client here calls ({@link preferredInterface}). */
export interface ChosenInterface {
  /** Its position in the card's `supportedInterfaces` (the normalized model's order). */
  readonly index: number;
  readonly url: string;
  /** `JSONRPC` or `HTTP+JSON`, upper case. */
  readonly binding: string;
  /** Major.Minor as the card declares it (`1.0`, `0.3`, `0.2`). */
  readonly protocolVersion: string;
  /** The interface's tenant, echoed on every call (A2A 1.0 §8.3.2); absent when the card names none. */
  readonly tenant?: string;
  /** Which client speaks it: ADK's `RemoteA2AAgent` (A2A 0.2/0.3) or the 1.x client (`V1RemoteAgent`). */
  readonly client: 'adk-0.3' | 'a2a-1.x';
}

/** Options of {@link preferredInterface}. */
export interface PreferredInterfaceOptions {
  /** Only interfaces of this tenant (a static entry or registry record naming one). */
  readonly tenant?: string;
}

/**
 * The interface a client here calls, by the card's own preference (A2A 1.0 §8.3.2: the first
 * entry of `supportedInterfaces` whose transport the client supports): the first JSONRPC or
 * HTTP+JSON interface, in an A2A version this product speaks (0.2/0.3 through ADK, 1.x), that
 * `judge` admits (every interface when no judge is given), of `options.tenant` when set.
 * Undefined when there is none. Pure.
 *
 * @example preferredInterface(card, policy)?.url // 'https://billing.example.com/a2a/v1'
 */
export function preferredInterface(
  card: { readonly supportedInterfaces: readonly { url: string; protocolBinding: string; protocolVersion: string; tenant?: string }[] },
  judge?: UrlJudge,
  options: PreferredInterfaceOptions = {},
): ChosenInterface | undefined {
  for (const [index, i] of card.supportedInterfaces.entries()) {
    const binding = i.protocolBinding.toUpperCase();
    if (!CALLED_BINDINGS.has(binding) || isHostPortTarget(i.url)) continue;
    const client = /^0\.[23](\.|$)/.test(i.protocolVersion) ? 'adk-0.3' : /^1\./.test(i.protocolVersion) ? 'a2a-1.x' : undefined;
    if (client === undefined) continue;
    if (options.tenant !== undefined && i.tenant !== options.tenant) continue;
    if (judge !== undefined && !judge.check(i.url).allowed) continue;
    return { index, url: i.url, binding, protocolVersion: i.protocolVersion, ...(i.tenant !== undefined && { tenant: i.tenant }), client };
  }
  return undefined;
}

/** Special-purpose blocks whose addresses name no host to call: a listener's "every address". */
const UNROUTABLE_BLOCKS = new Set(['this network', 'unspecified']);

/**
 * Why an interface URL's host names no host anyone can call — an IP literal in `0.0.0.0/8`
 * ("this network", e.g. BeeAI's default `http://0.0.0.0:9999`) or the unspecified address `::`,
 * by the special-purpose address registry the connection guard uses — or undefined.
 *
 * @example unroutableHost('http://0.0.0.0:9999') // 'the interface host 0.0.0.0 is unroutable (this network)'
 * @example unroutableHost('http://[::]:9999/a2a') // 'the interface host [::] is unroutable (unspecified)'
 */
export function unroutableHost(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  const block = specialPurposeBlock(host);
  return block !== undefined && UNROUTABLE_BLOCKS.has(block) ? `the interface host ${host} is unroutable (${block})` : undefined;
}

/** An interface URL a static entry's `interfaceUrl` replaced. */
export interface InterfaceRewrite {
  /** Position in the card's `supportedInterfaces` (the normalized model's order). */
  readonly index: number;
  readonly from: string;
  readonly to: string;
}

/** What a static entry's reviewed `interfaceUrl` does to a card ({@link reviewedInterface}). */
export type ReviewedInterface =
  /** The interface a client here would choose is routable: the card as it is (`unused`: the entry's interfaceUrl, not used). */
  | { readonly kind: 'as-is'; readonly card: AgentCardModel; readonly unused?: string }
  /** Its host was unroutable: the card with that one interface's URL replaced. */
  | { readonly kind: 'rewritten'; readonly card: AgentCardModel; readonly rewrite: InterfaceRewrite }
  /** Its host is unroutable and no interfaceUrl says where the agent answers (`reason`: {@link unroutableHost}'s). */
  | { readonly kind: 'unroutable'; readonly card: AgentCardModel; readonly reason: string };

/**
 * The one place a reviewed interface URL applies: the interface a client here would choose by
 * the card's order ({@link preferredInterface}, of `tenant` when set, not yet judged by the host
 * policy) is replaced by `interfaceUrl` only when its host is unroutable ({@link unroutableHost}),
 * never otherwise and never without the key. The replacement is then judged by the host policy
 * like any interface URL wherever the card is used. Pure; the card is not changed (a rewritten
 * one is a new, frozen model).
 *
 * @example reviewedInterface(beeaiCard, { interfaceUrl: 'http://127.0.0.1:9999/' }).kind // 'rewritten'
 */
export function reviewedInterface(card: AgentCardModel, options: { readonly interfaceUrl?: string; readonly tenant?: string } = {}): ReviewedInterface {
  const chosen = preferredInterface(card, undefined, options.tenant === undefined ? {} : { tenant: options.tenant });
  const unroutable = chosen === undefined ? undefined : unroutableHost(chosen.url);
  if (chosen === undefined || unroutable === undefined) {
    if (options.interfaceUrl === undefined) return { kind: 'as-is', card };
    const why = chosen === undefined ? 'the card has no interface a client here calls' : `the card's interface ${chosen.url} has a routable host and is called as it is`;
    return { kind: 'as-is', card, unused: `interfaceUrl ${options.interfaceUrl} is not used: ${why}` };
  }
  if (options.interfaceUrl === undefined) {
    return { kind: 'unroutable', card, reason: unroutable };
  }
  const to = options.interfaceUrl;
  const supportedInterfaces = card.supportedInterfaces.map((i, n) => (n === chosen.index ? frozenCopy(i, { url: to }) : i));
  return {
    kind: 'rewritten',
    card: frozenCopy(card, { supportedInterfaces: Object.freeze(supportedInterfaces) }),
    rewrite: Object.freeze({ index: chosen.index, from: chosen.url, to }),
  };
}
