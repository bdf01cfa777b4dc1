// @ts-check
/**
 * Pretty-prints a JSON value line by line, each line tagged with the JSON path of the value it
 * starts (the library's path syntax: `skills[1].tags`), so the card view can highlight every
 * problem where it is. Output is plain text; nothing is ever interpreted as HTML.
 */

/** @typedef {{ text: string, path: string, depth: number }} JsonLine */

/**
 * @param {string} parent
 * @param {string} key
 */
function childPath(parent, key) {
  return parent === '' ? key : `${parent}.${key}`;
}

/**
 * @param {unknown} value
 * @returns {JsonLine[]}
 */
export function jsonLines(value) {
  /** @type {JsonLine[]} */
  const lines = [];
  /**
   * @param {unknown} v
   * @param {string} path
   * @param {number} depth
   * @param {string} prefix
   * @param {string} comma
   */
  const walk = (v, path, depth, prefix, comma) => {
    if (Array.isArray(v)) {
      if (v.length === 0) {
        lines.push({ text: `${prefix}[]${comma}`, path, depth });
        return;
      }
      lines.push({ text: `${prefix}[`, path, depth });
      v.forEach((item, i) => walk(item, `${path}[${i}]`, depth + 1, '', i < v.length - 1 ? ',' : ''));
      lines.push({ text: `]${comma}`, path, depth });
      return;
    }
    if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      if (keys.length === 0) {
        lines.push({ text: `${prefix}{}${comma}`, path, depth });
        return;
      }
      lines.push({ text: `${prefix}{`, path, depth });
      keys.forEach((k, i) =>
        walk(/** @type {Record<string, unknown>} */ (v)[k], childPath(path, k), depth + 1, `${JSON.stringify(k)}: `, i < keys.length - 1 ? ',' : ''),
      );
      lines.push({ text: `}${comma}`, path, depth });
      return;
    }
    lines.push({ text: `${prefix}${JSON.stringify(v) ?? 'null'}${comma}`, path, depth });
  };
  walk(value, '', 0, '', '');
  return lines;
}

/**
 * True when `path` is `target` or inside it.
 * @param {string} path
 * @param {string} target
 */
export function isWithin(path, target) {
  if (target === '') return true;
  return path === target || path.startsWith(`${target}.`) || path.startsWith(`${target}[`);
}

/**
 * The longest prefix of `target` present among `paths` ('' = the root), and whether it was exact.
 * @param {ReadonlySet<string>} paths
 * @param {string} target
 * @returns {{ path: string, exact: boolean }}
 */
export function nearestPath(paths, target) {
  if (paths.has(target)) return { path: target, exact: true };
  let t = target;
  while (t !== '') {
    const cut = Math.max(t.lastIndexOf('.'), t.lastIndexOf('['));
    t = cut < 0 ? '' : t.slice(0, cut);
    if (paths.has(t)) return { path: t, exact: false };
  }
  return { path: '', exact: false };
}
