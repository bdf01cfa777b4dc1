/**
 * Internal: the YAML text behind a configuration. Parses it with a `LineCounter` so every problem,
 * syntax or schema, can name a 1-based line and column, and finds the node a path points at
 * (falling back to the nearest node that exists, e.g. the mapping a required key is missing from).
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { Problem } from '../errors.js';
import { formatPath, type ConfigPath } from './messages.js';

/** A 1-based position. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/** The parsed text: the plain value, syntax problems, and a way back from paths to positions. */
export class YamlSource {
  readonly #doc: Document.Parsed;
  readonly #lines: LineCounter;

  private constructor(doc: Document.Parsed, lines: LineCounter) {
    this.#doc = doc;
    this.#lines = lines;
  }

  /** Parses `text`; never throws (syntax errors are in {@link syntaxProblems}). */
  static parse(text: string): YamlSource {
    const lines = new LineCounter();
    // prettyErrors off: messages without a code excerpt; the position is reported separately.
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: false });
    return new YamlSource(doc, lines);
  }

  /** YAML syntax errors (bad indentation, unclosed brackets, duplicate keys, several documents). */
  syntaxProblems(): Problem[] {
    return this.#doc.errors.map((err) => {
      const at = this.#lines.linePos(err.pos[0]);
      return { path: '$', message: `YAML syntax: ${sentence(err.message)}`, line: at.line, column: at.col };
    });
  }

  /** The document as plain data; throws on alias bombs (more than 100 alias expansions). */
  toJS(): unknown {
    return this.#doc.toJS({ maxAliasCount: 100 });
  }

  /**
   * Where `path` is. `key: true` points at the key itself (for unknown keys) instead of its value.
   * A path that does not exist resolves to the nearest existing parent; an empty document to 1:1.
   */
  locate(path: ConfigPath, options: { key?: boolean } = {}): Position {
    let node: unknown = this.#doc.contents;
    let best: unknown = node;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i]!;
      if (isAlias(node)) node = node.resolve(this.#doc);
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
        if (pair === undefined) break;
        if (i === path.length - 1 && options.key === true) {
          best = pair.key;
          break;
        }
        node = pair.value;
        best = node ?? pair.key;
        if (node === null) break;
      } else if (isSeq(node) && typeof segment === 'number') {
        const item = node.items[segment];
        if (item === undefined) break;
        node = item;
        best = item;
      } else {
        break;
      }
    }
    const range = (best as Node | null | undefined)?.range;
    if (range === undefined || range === null) return { line: 1, column: 1 };
    const at = this.#lines.linePos(range[0]);
    return { line: at.line, column: at.col };
  }

  /** A located problem. */
  problem(path: ConfigPath, message: string, options: { key?: boolean } = {}): Problem {
    const at = this.locate(path, options);
    return { path: formatPath(path), message, line: at.line, column: at.column };
  }
}

function sentence(message: string): string {
  const first = message.split('\n', 1)[0]!.trim();
  return first.charAt(0).toLowerCase() + first.slice(1);
}

/** Where each parsed configuration came from, so later checks (secrets) can locate problems. */
const ORIGINS = new WeakMap<object, { source: YamlSource; file?: string }>();

/** Remembers the source of a parsed configuration. */
export function rememberSource(config: object, source: YamlSource, file: string | undefined): void {
  ORIGINS.set(config, file === undefined ? { source } : { source, file });
}

/** A located problem for a path of a parsed configuration (unlocated for configs built by hand). */
export function problemIn(config: object, path: ConfigPath, message: string): Problem {
  const origin = ORIGINS.get(config);
  return origin === undefined ? { path: formatPath(path), message } : origin.source.problem(path, message);
}
