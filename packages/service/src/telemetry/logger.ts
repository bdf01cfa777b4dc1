/**
 * The service's structured logger (pino): JSON lines by default, a short human format when
 * writing to a terminal. The library itself never logs; the service turns discovery events into
 * log lines here. A line written inside a sampled span carries its `trace_id` and `span_id`
 * (docs/observability.md "Logs").
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from 'pino';
import type { DiscoveryEvent, EventStream } from 'a2a-discovery';
import { activeTraceIds } from 'a2a-discovery/internal';

export type { Logger } from 'pino';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** JSON lines → `HH:MM:SS LEVEL msg key=value ...` */
function prettyStream(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        try {
          const { time, level, msg, pid: _pid, hostname: _host, ...rest } = JSON.parse(line) as Record<string, unknown>;
          const t = new Date(Number(time)).toISOString().slice(11, 19);
          const extra = Object.entries(rest)
            .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
            .join(' ');
          out.write(`${t} ${(LEVELS[Number(level)] ?? String(level)).padEnd(5)} ${String(msg ?? '')}${extra ? `  ${extra}` : ''}\n`);
        } catch {
          out.write(`${line}\n`);
        }
      }
      done();
    },
  });
}

/**
 * The active sampled span's ids on every line (child loggers included: the ADK's, the store's),
 * named as the OpenTelemetry log data model's trace context fields; nothing outside a span, or
 * when the span is not sampled.
 */
function traceMixin(): object {
  const ids = activeTraceIds();
  // A new object each time: pino merges the line's fields into it.
  return ids === undefined ? {} : { trace_id: ids.traceId, span_id: ids.spanId };
}

export function createLogger(options: { level?: string; pretty?: boolean; destination?: NodeJS.WritableStream } = {}): Logger {
  const out = options.destination ?? process.stdout;
  const pretty = options.pretty ?? (out === process.stdout && process.stdout.isTTY === true);
  return pino({ level: options.level ?? 'info', base: undefined, mixin: traceMixin }, pretty ? prettyStream(out) : (out as pino.DestinationStream));
}

/** Logs the events an operator cares about (not every cache hit). */
export function logEvents(events: EventStream, log: Logger): () => void {
  return events.subscribe((e: DiscoveryEvent) => {
    switch (e.type) {
      case 'snapshot.published':
        log.info({ version: e.version, digest: e.digest.slice(0, 12), agents: e.agents }, 'snapshot published');
        break;
      case 'snapshot.held':
        log.warn({ digest: e.digest.slice(0, 12), reason: e.reason }, 'snapshot held');
        break;
      case 'alert':
        log.warn({ kind: e.kind, ...(e.key !== undefined && { key: e.key }), ...(e.endpoint !== undefined && { endpoint: e.endpoint }) }, e.message);
        break;
      case 'alert.resolved':
        log.info({ kind: e.kind, key: e.key, ...(e.endpoint !== undefined && { endpoint: e.endpoint }) }, e.message);
        break;
      case 'session.expired':
      case 'session.restarted':
        log.info({ sessionId: e.sessionId, digest: e.digest.slice(0, 12) }, e.type);
        break;
      case 'endpoint.refused':
        log.warn({ endpoint: e.endpoint, sources: e.sources, code: e.code }, `endpoint refused: ${e.reason ?? ''}`);
        break;
      case 'card.result':
        if (e.outcome === 'stale' || e.outcome === 'invalid' || e.outcome === 'failed') {
          log.warn({ endpoint: e.endpoint, outcome: e.outcome, code: e.code, failures: e.failures }, e.reason ?? e.outcome);
        } else if (e.outcome === 'changed') {
          log.info({ endpoint: e.endpoint, status: e.status, bytes: e.bytes }, 'card changed');
        }
        break;
      case 'health.changed':
        log.info({ endpoint: e.endpoint, from: e.from, to: e.to }, 'health changed');
        break;
      case 'api.action': {
        // Who did what (the journal keeps it too); an actor is a subject and a role, never a token.
        const who = e.actor.kind === 'person' ? `${e.actor.name ?? e.actor.sub ?? 'a person'}${e.actor.role !== undefined ? ` (${e.actor.role})` : ''}` : e.actor.kind;
        log.info({ action: e.action, actor: e.actor, ...(e.sessionId !== undefined && { sessionId: e.sessionId }), ...(e.version !== undefined && { version: e.version }) }, `${e.action} by ${who}`);
        break;
      }
      default:
        break;
    }
  });
}
