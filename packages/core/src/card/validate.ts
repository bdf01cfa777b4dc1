/**
 * Structural validation of a card's raw JSON, in the dialect it was published in, collecting
 * every problem with its JSON path and a sentence a card publisher understands. Nothing here
 * throws on hostile input: the value has already passed the bounded walk in safe-json.ts.
 */
import type { Problem } from '../errors.js';
import { joinPath } from './safe-json.js';
import type { CardProtocolVersion } from './model.js';
import { canonicalMode } from './modes.js';

type Obj = Record<string, unknown>;

class Checker {
  readonly problems: Problem[] = [];
  readonly warnings: Problem[] = [];

  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  warn(path: string, message: string): void {
    this.warnings.push({ path, message });
  }

  /** True when `value` is an object; otherwise false, with the problem recorded at `path`. */
  isObject(value: unknown, path: string): value is Obj {
    if (isObj(value)) return true;
    this.problem(path, `must be an object, found ${describe(value)}`);
    return false;
  }

  object(parent: Obj, key: string, path: string, required: boolean): Obj | undefined {
    const v = parent[key];
    const p = joinPath(path, key);
    if (v === undefined) {
      if (required) this.problem(p, 'required, must be an object');
      return undefined;
    }
    return this.isObject(v, p) ? v : undefined;
  }

  string(
    parent: Obj,
    key: string,
    path: string,
    opts: { required?: boolean; nonEmpty?: boolean; url?: boolean; emptyIsAbsent?: boolean; target?: boolean } = {},
  ): string | undefined {
    const v = parent[key];
    const p = joinPath(path, key);
    if (v === undefined) {
      if (opts.required) this.problem(p, opts.url ? 'required, must be an absolute URL' : 'required, must be a string');
      return undefined;
    }
    if (typeof v !== 'string') {
      this.problem(p, `must be a string, found ${describe(v)}`);
      return undefined;
    }
    if (opts.emptyIsAbsent && v === '') {
      // The a2a-js SDK's canonical form drops "" as a default value: the field is absent.
      this.warn(p, 'is empty; treated as absent');
      return undefined;
    }
    if (opts.nonEmpty && v.trim() === '') {
      this.problem(p, 'must not be empty');
      return undefined;
    }
    // gRPC targets are conventionally written host:port; such an interface is listed, never called.
    if (opts.url && !isAbsoluteUrl(v) && !(opts.target && isHostPortTarget(v))) {
      this.problem(p, `must be an absolute URL, found ${JSON.stringify(truncate(v))}`);
      return undefined;
    }
    return v;
  }

  boolean(parent: Obj, key: string, path: string): void {
    const v = parent[key];
    if (v !== undefined && typeof v !== 'boolean') this.problem(joinPath(path, key), `must be true or false, found ${describe(v)}`);
  }

  array(parent: Obj, key: string, path: string, opts: { required?: boolean; nonEmpty?: boolean; what?: string } = {}): unknown[] | undefined {
    const v = parent[key];
    const p = joinPath(path, key);
    const what = opts.what ?? 'items';
    if (v === undefined) {
      if (opts.required) this.problem(p, `required, must be ${opts.nonEmpty ? 'a non-empty' : 'an'} array of ${what}`);
      return undefined;
    }
    if (!Array.isArray(v)) {
      this.problem(p, `must be an array of ${what}, found ${describe(v)}`);
      return undefined;
    }
    if (opts.nonEmpty && v.length === 0) {
      this.problem(p, `must be a non-empty array of ${what}`);
      return undefined;
    }
    return v;
  }

  strings(parent: Obj, key: string, path: string, opts: { required?: boolean; nonEmpty?: boolean } = {}): string[] | undefined {
    const arr = this.array(parent, key, path, { ...opts, what: 'strings' });
    if (arr === undefined) return undefined;
    const p = joinPath(path, key);
    let ok = true;
    arr.forEach((item, i) => {
      if (typeof item !== 'string') {
        this.problem(`${p}[${i}]`, `must be a string, found ${describe(item)}`);
        ok = false;
      } else if (item.trim() === '') {
        this.problem(`${p}[${i}]`, 'must not be empty');
        ok = false;
      }
    });
    return ok ? (arr as string[]) : undefined;
  }

  modes(parent: Obj, key: string, path: string, required: boolean): void {
    const modes = this.strings(parent, key, path, { required, nonEmpty: required });
    if (modes === undefined) return;
    const p = joinPath(path, key);
    let ignored = 0;
    modes.forEach((m, i) => {
      if (canonicalMode(m) === undefined) {
        ignored++;
        // Seen in the a2a-js SDK's own samples ("task-status"); a mode nobody can need costs nothing.
        this.warn(
          `${p}[${i}]`,
          `${JSON.stringify(truncate(m))} is neither a media type (type/subtype) nor a known short form (text, json, data, file, image, audio, video); this mode is ignored`,
        );
      }
    });
    if (ignored > 0 && ignored === modes.length) {
      this.warn(p, required ? 'lists no usable mode, so no need with modes can match this card' : 'lists no usable mode; the skill uses the card\'s default modes');
    }
  }
}

/** A2A versions this product reads: 0.2, 0.3 and 1.x (Major.Minor, with or without a patch). */
const KNOWN_VERSION = /^(0\.[23]|1\.\d+)(\.\d+)?$/;

function unknownVersion(v: string): string {
  return `${JSON.stringify(truncate(v))} is not an A2A version this product knows (0.2, 0.3, 1.x)`;
}

/** Recognises the protocol version of a raw card, following @a2a-js/sdk 1.x's rules, plus 0.2. */
export function detectProtocolVersion(raw: Obj, sourceUrl?: string): CardProtocolVersion {
  const si = raw.supportedInterfaces;
  if (Array.isArray(si) && si.length > 0) return '1.0';
  const pv = raw.protocolVersion;
  if (typeof pv === 'string' && /^0\.2(\.|$)/.test(pv)) return '0.2';
  if ('preferredTransport' in raw || 'additionalInterfaces' in raw) return '0.3';
  if (typeof pv === 'string' && /^0\.3(\.|$)/.test(pv)) return '0.3';
  // 0.2 cards had a `url` but no `protocolVersion`, and were served at /.well-known/agent.json.
  if (typeof raw.url === 'string') return pv === undefined || sourceUrl?.endsWith('/.well-known/agent.json') ? '0.2' : '0.3';
  return '1.0';
}

export interface ValidationResult {
  problems: Problem[];
  warnings: Problem[];
}

/** Validates a raw card in the dialect `version`, reporting every problem. */
export function validateRawCard(raw: unknown, version: CardProtocolVersion): ValidationResult {
  const c = new Checker();
  if (!isObj(raw)) {
    c.problem('$', `an agent card must be a JSON object, found ${describe(raw)}`);
    return c;
  }
  const $ = '$';
  c.string(raw, 'name', $, { required: true, nonEmpty: true });
  c.string(raw, 'description', $, { required: true });
  c.string(raw, 'version', $, { required: true, nonEmpty: true });
  c.string(raw, 'documentationUrl', $, { url: true, emptyIsAbsent: true });
  c.string(raw, 'iconUrl', $, { url: true, emptyIsAbsent: true });
  const provider = c.object(raw, 'provider', $, false);
  if (provider) {
    c.string(provider, 'organization', 'provider', { required: true });
    // Both are required (0.3 schema, 1.0 proto); a provider without `url` (reactive-agents) leads
    // a client nowhere, so it is dropped with a warning (normalize.ts) instead of refusing the card.
    if (provider.url === undefined) c.warn('provider.url', 'missing (a provider needs one); the provider is left out');
    else c.string(provider, 'url', 'provider', { required: true, url: true });
  }

  if (version === '1.0') {
    const interfaces = c.array(raw, 'supportedInterfaces', $, { required: true, nonEmpty: true, what: 'interfaces' });
    interfaces?.forEach((item, i) => {
      const p = `supportedInterfaces[${i}]`;
      if (!c.isObject(item, p)) return;
      c.string(item, 'url', p, { required: true, url: true, target: true });
      c.string(item, 'protocolBinding', p, { required: true, nonEmpty: true });
      const pv = c.string(item, 'protocolVersion', p, { required: true, nonEmpty: true });
      if (pv !== undefined && pv !== '' && !KNOWN_VERSION.test(pv)) {
        c.warn(`${p}.protocolVersion`, `${unknownVersion(pv)}; the card is read by the A2A 1.0 rules (the closest), and this interface is never called`);
      }
      c.string(item, 'tenant', p);
    });
  } else {
    c.string(raw, 'url', $, { required: true, url: true });
    c.string(raw, 'preferredTransport', $);
    const pv = c.string(raw, 'protocolVersion', $);
    if (pv !== undefined && !KNOWN_VERSION.test(pv)) {
      c.warn('protocolVersion', `${unknownVersion(pv)}; the card is read by the A2A ${version} rules (the closest, by its shape) and called as ${version}`);
    }
    const extra = c.array(raw, 'additionalInterfaces', $, { what: 'interfaces' });
    extra?.forEach((item, i) => {
      const p = `additionalInterfaces[${i}]`;
      if (!c.isObject(item, p)) return;
      c.string(item, 'url', p, { required: true, url: true, target: true });
      c.string(item, 'transport', p, { required: true, nonEmpty: true });
    });
    c.boolean(raw, 'supportsAuthenticatedExtendedCard', $);
  }

  const caps = c.object(raw, 'capabilities', $, true);
  if (caps) {
    c.boolean(caps, 'streaming', 'capabilities');
    c.boolean(caps, 'pushNotifications', 'capabilities');
    c.boolean(caps, 'extendedAgentCard', 'capabilities');
    c.boolean(caps, 'stateTransitionHistory', 'capabilities');
    const exts = c.array(caps, 'extensions', 'capabilities', { what: 'extensions' });
    exts?.forEach((item, i) => {
      const p = `capabilities.extensions[${i}]`;
      if (!c.isObject(item, p)) return;
      c.string(item, 'uri', p, { required: true, nonEmpty: true });
      c.string(item, 'description', p);
      c.boolean(item, 'required', p);
      c.object(item, 'params', p, false);
    });
  }

  c.modes(raw, 'defaultInputModes', $, true);
  c.modes(raw, 'defaultOutputModes', $, true);

  const skills = c.array(raw, 'skills', $, { required: true, what: 'skills' });
  if (skills !== undefined && skills.length === 0) {
    // Mastra publishes agents without tools this way. 0.3 requires the member, not a non-empty list.
    c.warn('skills', 'is empty: the agent offers no skill, so it matches no tag need (it can still be named in static configuration)');
  }
  const seenIds = new Map<string, number>();
  skills?.forEach((item, i) => {
    const p = `skills[${i}]`;
    if (!c.isObject(item, p)) return;
    const id = c.string(item, 'id', p, { required: true, nonEmpty: true });
    if (id !== undefined) {
      const first = seenIds.get(id);
      if (first !== undefined) c.problem(`${p}.id`, `duplicates the id of skills[${first}] (${JSON.stringify(truncate(id))})`);
      else seenIds.set(id, i);
    }
    c.string(item, 'name', p, { required: true, nonEmpty: true });
    c.string(item, 'description', p, { required: true });
    const tags = c.strings(item, 'tags', p, { required: true });
    if (tags !== undefined && tags.length === 0) c.warn(`${p}.tags`, 'is empty: this skill matches no tag need');
    c.strings(item, 'examples', p);
    c.modes(item, 'inputModes', p, false);
    c.modes(item, 'outputModes', p, false);
    if (version === '1.0') checkRequirements(c, item, 'securityRequirements', p);
    else checkLegacySecurity(c, item, 'security', p);
  });

  if (version === '1.0') {
    checkSchemes(c, raw);
    checkRequirements(c, raw, 'securityRequirements', $);
  } else {
    checkLegacySchemes(c, raw);
    checkLegacySecurity(c, raw, 'security', $);
  }

  const sigs = c.array(raw, 'signatures', $, { what: 'signatures' });
  sigs?.forEach((item, i) => {
    const p = `signatures[${i}]`;
    if (!c.isObject(item, p)) return;
    c.string(item, 'protected', p, { required: true, nonEmpty: true });
    c.string(item, 'signature', p, { required: true, nonEmpty: true });
    c.object(item, 'header', p, false);
  });
  return c;
}

const V1_SCHEME_KINDS = [
  'apiKeySecurityScheme',
  'httpAuthSecurityScheme',
  'oauth2SecurityScheme',
  'openIdConnectSecurityScheme',
  'mtlsSecurityScheme',
] as const;
const LEGACY_SCHEME_TYPES = new Set(['apiKey', 'http', 'oauth2', 'openIdConnect', 'mutualTLS']);

/** Calls `check` for each of the card's named security schemes that is an object, with its path; records a problem for each other one. */
function eachScheme(c: Checker, raw: Obj, check: (path: string, scheme: Obj) => void): void {
  const schemes = c.object(raw, 'securitySchemes', '$', false);
  if (!schemes) return;
  for (const [name, value] of Object.entries(schemes)) {
    const p = joinPath('securitySchemes', name);
    if (c.isObject(value, p)) check(p, value);
  }
}

function checkSchemes(c: Checker, raw: Obj): void {
  eachScheme(c, raw, (p, value) => {
    const kinds = Object.keys(value).filter((k) => (V1_SCHEME_KINDS as readonly string[]).includes(k));
    if (kinds.length !== 1) {
      c.problem(p, `must hold exactly one of ${V1_SCHEME_KINDS.join(', ')}; found ${kinds.length === 0 ? 'none' : kinds.join(', ')}`);
      return;
    }
    const kind = kinds[0]!;
    const body = c.object(value, kind, p, true);
    if (!body) return;
    const bp = joinPath(p, kind);
    if (kind === 'httpAuthSecurityScheme') c.string(body, 'scheme', bp, { required: true, nonEmpty: true });
    if (kind === 'apiKeySecurityScheme') {
      c.string(body, 'location', bp, { required: true, nonEmpty: true });
      c.string(body, 'name', bp, { required: true, nonEmpty: true });
    }
    if (kind === 'openIdConnectSecurityScheme') c.string(body, 'openIdConnectUrl', bp, { required: true, url: true });
    if (kind === 'oauth2SecurityScheme') {
      c.object(body, 'flows', bp, true);
      c.string(body, 'oauth2MetadataUrl', bp, { url: true });
    }
  });
}

function checkLegacySchemes(c: Checker, raw: Obj): void {
  eachScheme(c, raw, (p, value) => {
    const type = c.string(value, 'type', p, { required: true });
    if (type === undefined) return;
    if (!LEGACY_SCHEME_TYPES.has(type)) {
      c.problem(`${p}.type`, `${JSON.stringify(truncate(type))} is not one of apiKey, http, oauth2, openIdConnect, mutualTLS`);
      return;
    }
    if (type === 'http') c.string(value, 'scheme', p, { required: true, nonEmpty: true });
    if (type === 'apiKey') {
      c.string(value, 'in', p, { required: true, nonEmpty: true });
      c.string(value, 'name', p, { required: true, nonEmpty: true });
    }
    if (type === 'openIdConnect') c.string(value, 'openIdConnectUrl', p, { required: true, url: true });
    if (type === 'oauth2') c.object(value, 'flows', p, true);
  });
}

function checkRequirements(c: Checker, parent: Obj, key: string, path: string): void {
  const reqs = c.array(parent, key, path, { what: 'security requirements' });
  reqs?.forEach((item, i) => {
    const p = `${joinPath(path, key)}[${i}]`;
    if (!c.isObject(item, p)) return;
    const schemes = c.object(item, 'schemes', p, false);
    if (!schemes) return;
    for (const [name, list] of Object.entries(schemes)) {
      const lp = joinPath(`${p}.schemes`, name);
      if (!isObj(list)) c.problem(lp, `must be an object such as {"list": ["scope"]}, found ${describe(list)}`);
      else c.strings(list, 'list', lp);
    }
  });
}

function checkLegacySecurity(c: Checker, parent: Obj, key: string, path: string): void {
  const reqs = c.array(parent, key, path, { what: 'security requirements' });
  reqs?.forEach((item, i) => {
    const p = `${joinPath(path, key)}[${i}]`;
    if (!isObj(item)) return c.problem(p, `must be an object mapping scheme names to scope lists, found ${describe(item)}`);
    for (const name of Object.keys(item)) c.strings(item, name, p);
  });
}

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isAbsoluteUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol.length > 1 && s.length <= 2048;
  } catch {
    return false;
  }
}

/** `host:port` (or `[v6]:port`) with no scheme: the usual way to write a gRPC target. */
export function isHostPortTarget(s: string): boolean {
  return /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\]):\d{1,5}$/.test(s);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(truncate(v))}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function truncate(s: string, n = 60): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
