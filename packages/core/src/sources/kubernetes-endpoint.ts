/**
 * Internal: the rules that turn a Kubernetes Service into an endpoint record (documented in
 * docs/sources.md, "Kubernetes base URL"):
 *
 * 1. annotation `a2a-discovery/base-url`, when present: an absolute http(s) URL used as is;
 * 2. otherwise `<scheme>://<name>.<namespace>.svc.<clusterDomain>:<port>/`, where the port is
 *    annotation `a2a-discovery/port` (a number, or the name of one of the Service's ports),
 *    else the port named `a2a`, else the first port.
 *
 * A Service where none of these gives a usable URL is skipped with a problem.
 */
import type { Problem } from '../errors.js';
import { impossibleUrl } from '../rules/urls.js';
import { describe } from '../text.js';
import type { EndpointRecord } from './types.js';

/** Annotation holding a complete base URL. */
const BASE_URL_ANNOTATION = 'a2a-discovery/base-url';
/** Annotation naming the port (number or port name). */
const PORT_ANNOTATION = 'a2a-discovery/port';
/** The port name preferred when no annotation says otherwise. */
const A2A_PORT_NAME = 'a2a';

/** The parts of a Service the rules read (a `V1Service` fits). */
export interface ServiceLike {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string>; uid?: string; resourceVersion?: string };
  spec?: { ports?: Array<{ name?: string; port?: number }> };
}

export interface ServiceEndpointOptions {
  source: string;
  scheme: 'https' | 'http';
  clusterDomain: string;
}

/** The record for a Service, or the problem that makes it unusable. */
export function serviceEndpoint(service: ServiceLike, options: ServiceEndpointOptions): { record: EndpointRecord } | { problem: Problem } {
  const name = service.metadata?.name;
  const namespace = service.metadata?.namespace;
  const at = `${namespace ?? '?'}/${name ?? '?'}`;
  if (typeof name !== 'string' || name === '' || typeof namespace !== 'string' || namespace === '') {
    return { problem: { path: at, message: 'Service without metadata.name or metadata.namespace; skipped' } };
  }
  const annotations = service.metadata?.annotations ?? {};
  const metadata: Record<string, string> = { namespace, service: name };
  const done = (baseUrl: string, from: string): { record: EndpointRecord } => ({
    record: { name: `${namespace}/${name}`, baseUrl, source: options.source, metadata: { ...metadata, baseUrlFrom: from } },
  });

  const annotated = annotations[BASE_URL_ANNOTATION];
  if (annotated !== undefined) {
    const value = annotated.trim();
    const why = impossibleUrl(value);
    if (why !== undefined) return { problem: { path: `${at}.metadata.annotations["${BASE_URL_ANNOTATION}"]`, message: `${why}; Service skipped` } };
    return done(value, 'annotation');
  }

  const ports = (service.spec?.ports ?? []).filter((p) => typeof p?.port === 'number' && Number.isInteger(p.port) && p.port > 0 && p.port < 65536);
  let port: number | undefined;
  let from: string;
  const portAnnotation = annotations[PORT_ANNOTATION];
  if (portAnnotation !== undefined) {
    const value = portAnnotation.trim();
    if (/^\d+$/.test(value)) {
      const n = Number(value);
      if (n < 1 || n > 65535) return { problem: { path: `${at}.metadata.annotations["${PORT_ANNOTATION}"]`, message: `port ${describe(value)} is out of range 1-65535; Service skipped` } };
      port = n;
    } else {
      port = ports.find((p) => p.name === value)?.port;
      if (port === undefined) {
        return { problem: { path: `${at}.metadata.annotations["${PORT_ANNOTATION}"]`, message: `${describe(value)} is neither a port number nor the name of one of the Service's ports; Service skipped` } };
      }
    }
    from = 'port-annotation';
  } else {
    const named = ports.find((p) => p.name === A2A_PORT_NAME);
    port = named?.port ?? ports[0]?.port;
    from = named !== undefined ? 'port-name' : 'first-port';
  }
  if (port === undefined) {
    return { problem: { path: `${at}.spec.ports`, message: `Service has no usable port and no ${BASE_URL_ANNOTATION} annotation; skipped` } };
  }
  metadata['port'] = String(port);
  return done(`${options.scheme}://${name}.${namespace}.svc.${options.clusterDomain}:${port}/`, from);
}
