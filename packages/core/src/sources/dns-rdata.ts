/**
 * The record data the DNS source reads: SVCB rdata (RFC 9460 §2.2 wire format, which `dns-packet`
 * does not know and hands over as raw bytes), DNS-AID's TXT fallback and `_index._agents` list,
 * and DNS-SD's TXT key/value pairs (RFC 6763 §6). Untrusted input: every length is checked
 * against the bytes that remain, and each fault throws one precise message.
 *
 * @module
 */
import { isIP } from 'node:net';
import { DiscoveryError } from '../errors.js';
import { DNS_AID_A2A_PROTOCOL, DNS_AID_PARAM_KEYS, SVCB_PARAM_KEYS, type DnsAidParamName } from '../rules/dns-aid.js';

/** A record whose data cannot be read: the source skips it and reports the message as a problem. */
function malformed(message: string): DiscoveryError {
  return new DiscoveryError('ERR_FETCH_NETWORK', message, { stage: 'source' });
}

/** One SVCB record's data, decoded. */
export interface SvcbData {
  /** SvcPriority: 0 is AliasMode, 1–65535 ServiceMode (lower is preferred). */
  readonly priority: number;
  /** TargetName without the trailing dot; `'.'` for the root ("the owner name" in ServiceMode). */
  readonly target: string;
  readonly alpn?: readonly string[];
  readonly port?: number;
  readonly ipv4hint?: readonly string[];
  readonly ipv6hint?: readonly string[];
  /** DNS-AID's parameters (`cap`, `capsha256`, `bap`, `policy`, `realm`, `sig`), as UTF-8 text. */
  readonly dnsAid: Readonly<Partial<Record<DnsAidParamName, string>>>;
  /** SvcParamKeys present that this reader does not interpret. */
  readonly otherKeys: readonly number[];
}

const AID_BY_KEY = new Map<number, DnsAidParamName>(Object.entries(DNS_AID_PARAM_KEYS).map(([name, key]) => [key, name as DnsAidParamName]));

/**
 * Decodes SVCB rdata (RFC 9460 §2.2): SvcPriority, an uncompressed TargetName, then SvcParams in
 * strictly increasing key order.
 *
 * @throws Error naming the fault (truncated data, keys out of order, a malformed value).
 */
export function decodeSvcb(rdata: Uint8Array): SvcbData {
  const buf = Buffer.from(rdata.buffer, rdata.byteOffset, rdata.byteLength);
  if (buf.length < 3) throw malformed(`SVCB rdata of ${buf.length} bytes is too short`);
  const priority = buf.readUInt16BE(0);
  let offset = 2;
  const labels: string[] = [];
  // RFC 9460 §2.2: "TargetName ... MUST NOT be compressed".
  for (;;) {
    if (offset >= buf.length) throw malformed('SVCB TargetName runs past the end of the rdata');
    const len = buf[offset]!;
    offset += 1;
    if (len === 0) break;
    if (len > 63) throw malformed(`SVCB TargetName has a label of length ${len} (compressed or malformed)`);
    if (offset + len > buf.length) throw malformed('SVCB TargetName runs past the end of the rdata');
    labels.push(buf.toString('latin1', offset, offset + len));
    offset += len;
  }
  const target = labels.length === 0 ? '.' : labels.join('.').toLowerCase();
  const out: { -readonly [K in keyof SvcbData]: SvcbData[K] } = { priority, target, dnsAid: {}, otherKeys: [] };
  const dnsAid: Partial<Record<DnsAidParamName, string>> = {};
  const otherKeys: number[] = [];
  let lastKey = -1;
  while (offset < buf.length) {
    if (offset + 4 > buf.length) throw malformed('SVCB SvcParam header runs past the end of the rdata');
    const key = buf.readUInt16BE(offset);
    const len = buf.readUInt16BE(offset + 2);
    offset += 4;
    if (key <= lastKey) throw malformed(`SVCB SvcParamKey ${key} is out of order (after ${lastKey}); RFC 9460 §2.2 requires increasing keys`);
    lastKey = key;
    if (offset + len > buf.length) throw malformed(`SVCB SvcParam key${key} of length ${len} runs past the end of the rdata`);
    const value = buf.subarray(offset, offset + len);
    offset += len;
    const aid = AID_BY_KEY.get(key);
    if (aid !== undefined) dnsAid[aid] = value.toString('utf8');
    else if (key === SVCB_PARAM_KEYS.alpn) out.alpn = decodeAlpn(value);
    else if (key === SVCB_PARAM_KEYS.port) {
      if (len !== 2) throw malformed(`SVCB port has ${len} bytes, not 2`);
      out.port = value.readUInt16BE(0);
    } else if (key === SVCB_PARAM_KEYS.ipv4hint) out.ipv4hint = addresses(value, 4);
    else if (key === SVCB_PARAM_KEYS.ipv6hint) out.ipv6hint = addresses(value, 16);
    else otherKeys.push(key);
  }
  out.dnsAid = Object.freeze(dnsAid);
  out.otherKeys = Object.freeze(otherKeys);
  return Object.freeze(out);
}

function decodeAlpn(value: Buffer): string[] {
  const ids: string[] = [];
  let i = 0;
  while (i < value.length) {
    const len = value[i]!;
    if (len === 0 || i + 1 + len > value.length) throw malformed('SVCB alpn value is malformed');
    ids.push(value.toString('latin1', i + 1, i + 1 + len));
    i += 1 + len;
  }
  if (ids.length === 0) throw malformed('SVCB alpn value is empty');
  return ids;
}

function addresses(value: Buffer, size: 4 | 16): string[] {
  if (value.length === 0 || value.length % size !== 0) throw malformed(`SVCB ipv${size === 4 ? 4 : 6}hint of ${value.length} bytes is not a list of addresses`);
  const out: string[] = [];
  for (let i = 0; i < value.length; i += size) {
    if (size === 4) out.push([...value.subarray(i, i + 4)].join('.'));
    else {
      const groups: string[] = [];
      for (let j = 0; j < 16; j += 2) groups.push(value.readUInt16BE(i + j).toString(16));
      out.push(groups.join(':'));
    }
  }
  return out;
}

/**
 * The `key=value` pairs of a TXT record's character-strings: each string is one pair (RFC 6763
 * §6.3) or several separated by spaces (how DNS-AID's TXT fallback is often written). A key is
 * compared in lower case; the first occurrence of a key wins (RFC 6763 §6.4); a string without
 * `=` is a key with an empty value.
 */
export function txtPairs(strings: readonly string[]): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const s of strings) {
    const parts = s.includes('=') && /\s\S+=/.test(s) ? s.trim().split(/\s+/) : [s];
    for (const part of parts) {
      const i = part.indexOf('=');
      const key = (i < 0 ? part : part.slice(0, i)).trim().toLowerCase();
      if (key === '' || pairs.has(key)) continue;
      pairs.set(key, i < 0 ? '' : part.slice(i + 1));
    }
  }
  return pairs;
}

/** The SVCB-equivalent fields of DNS-AID's TXT fallback (`target=… port=… cap=… capsha256=…`). */
export function svcbFromTxt(strings: readonly string[]): SvcbData {
  const pairs = txtPairs(strings);
  const dnsAid: Partial<Record<DnsAidParamName, string>> = {};
  for (const name of Object.keys(DNS_AID_PARAM_KEYS) as DnsAidParamName[]) {
    // dns-aid-core's TXT reader spells it `cap-sha256`.
    const v = pairs.get(name) ?? (name === 'capsha256' ? pairs.get('cap-sha256') : undefined);
    if (v !== undefined && v !== '') dnsAid[name] = v;
  }
  const port = pairs.get('port');
  const portNumber = port === undefined ? undefined : Number(port);
  if (portNumber !== undefined && !(Number.isInteger(portNumber) && portNumber > 0 && portNumber < 65536)) throw malformed(`TXT port=${JSON.stringify(port)} is not a port number`);
  const target = (pairs.get('target') ?? '.').replace(/\.$/, '').toLowerCase() || '.';
  const alpn = pairs.get('alpn');
  return Object.freeze({
    priority: 1,
    target,
    ...(alpn !== undefined && alpn !== '' && { alpn: alpn.split(',') }),
    ...(portNumber !== undefined && { port: portNumber }),
    dnsAid: Object.freeze(dnsAid),
    otherKeys: Object.freeze([]),
  });
}

/** What a domain's `_index._agents` TXT entry holds. */
export interface DnsAidIndex {
  /** A2A agent labels listed (`agents=billing:a2a,chat:mcp` → `['billing']`), in order. */
  readonly agents: readonly string[];
  /** Entries of other protocols, skipped (`chat:mcp`). */
  readonly otherProtocols: readonly string[];
  /** A registry the entry points to (`registry=https://…`), not followed by this source. */
  readonly registry?: string;
}

/**
 * Reads an `_index._agents` TXT entry. The draft says the entry points to the domain's agent
 * registry; its reference implementation (dns-aid-core) keeps the list itself there,
 * `agents={name}:{protocol},…`. Both are read: the list gives agent labels, a `registry=` URL is
 * reported (configure it as a registry source to read it).
 */
export function readDnsAidIndex(strings: readonly string[]): DnsAidIndex {
  const pairs = txtPairs(strings);
  const agents: string[] = [];
  const otherProtocols: string[] = [];
  for (const item of (pairs.get('agents') ?? '').split(',')) {
    const entry = item.trim();
    if (entry === '') continue;
    const [name, protocol = DNS_AID_A2A_PROTOCOL] = entry.split(':');
    if (protocol.toLowerCase() === DNS_AID_A2A_PROTOCOL) {
      if (!agents.includes(name!)) agents.push(name!);
    } else otherProtocols.push(entry);
  }
  const registry = pairs.get('registry');
  return Object.freeze({ agents: Object.freeze(agents), otherProtocols: Object.freeze(otherProtocols), ...(registry !== undefined && registry !== '' && { registry }) });
}

/** A host for a URL: IPv6 literals in brackets. */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
