/**
 * The documentation's links and images lead somewhere: in README.md, docs/*.md and each package's
 * README.md, every relative link and image names a file of the repository, and every `#anchor`
 * (in the same file or another markdown file) names a heading there, slugged as GitHub does
 * (lower case, punctuation dropped, spaces to hyphens, `-1`, `-2` for repeats). Links inside code
 * (fenced blocks and `inline code`) are text, not links; absolute URLs are not fetched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;

/** The markdown files checked, relative to the root. */
function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  const packages = readdirSync(join(root, 'packages')).map((p) => `packages/${p}/README.md`).filter((f) => existsSync(join(root, f)));
  return ['README.md', ...docs, ...packages];
}

/**
 * The lines outside fenced code blocks (a fenced line becomes empty, so lines keep their numbers),
 * without their inline code unless `keepInline` (a heading's code is part of its slug).
 */
function prose(text: string, keepInline = false): string[] {
  const lines = text.split('\n');
  let fence: string | undefined;
  return lines.map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return '';
    }
    if (marker !== undefined) {
      fence = marker;
      return '';
    }
    return keepInline ? line : line.replace(/(`+)[\s\S]*?\1/g, '');
  });
}

/** GitHub's slug of a heading's text (github-slugger): lower case, punctuation and symbols dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*+/g, '')
    .trim();
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();

/** The anchors GitHub gives the headings of a markdown file (repeats numbered), plus explicit `id`/`name` attributes. */
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors) return anchors;
  anchors = new Set();
  const seen = new Map<string, number>();
  const text = readFileSync(join(root, file), 'utf8');
  for (const line of prose(text, true)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = githubSlug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<[a-z]+\s[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  anchorCache.set(file, anchors);
  return anchors;
}

interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

/** Every link and image target of a file: `[text](target)`, `![alt](target)`, `[ref]: target`, and HTML `href`/`src`. */
function linksOf(file: string): Link[] {
  const out: Link[] = [];
  prose(readFileSync(join(root, file), 'utf8')).forEach((text, i) => {
    const line = i + 1;
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ file, line, target: m[1]! });
    const ref = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(text);
    if (ref) out.push({ file, line, target: ref[1]! });
    for (const m of text.matchAll(/\b(?:href|src)="([^"]+)"/g)) out.push({ file, line, target: m[1]! });
  });
  return out;
}

/** Why a link leads nowhere, or undefined when it leads somewhere (absolute URLs are not checked). */
function problem(link: Link): string | undefined {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash >= 0 ? target.slice(0, hash) : target);
  const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : undefined;
  const resolved = path === '' ? link.file : normalize(join(dirname(link.file), path));
  if (resolved.startsWith('..')) return `${target} leaves the repository`;
  if (!existsSync(join(root, resolved))) return `${target}: no such file (${resolved})`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!resolved.endsWith('.md') || statSync(join(root, resolved)).isDirectory()) return undefined;
  return anchorsOf(resolved).has(anchor) ? undefined : `${target}: ${relative('.', resolved)} has no heading #${anchor}`;
}

test("GitHub's heading slugs: punctuation dropped, spaces to hyphens, code and links as their text", () => {
  assert.equal(githubSlug('Packages: what to install'), 'packages-what-to-install');
  assert.equal(githubSlug('Credentials — how to authenticate to one origin'), 'credentials--how-to-authenticate-to-one-origin');
  assert.equal(githubSlug('The service as an A2A agent'), 'the-service-as-an-a2a-agent');
  assert.equal(githubSlug('`static` — reviewed agents'), 'static--reviewed-agents');
  assert.equal(githubSlug('Several replicas (PostgreSQL)'), 'several-replicas-postgresql');
  assert.equal(githubSlug('[docs](x.md) and `a_b`'), 'docs-and-a_b');
});

test('every relative link and image in the README, docs/ and the packages\' READMEs names an existing file and heading', () => {
  const files = markdownFiles();
  assert.ok(files.length > 20, files.join(', '));
  const links = files.flatMap(linksOf);
  assert.ok(links.length > 100, `${links.length} links found`);
  const broken = links.flatMap((link) => {
    const why = problem(link);
    return why === undefined ? [] : [`${link.file}:${link.line}: ${why}`];
  });
  assert.deepEqual(broken, []);
});
