#!/usr/bin/env node
/**
 * The public API of each package, as API Extractor reports it: one `.api.md` per entry point,
 * committed under `packages/<package>/api/`. A change of the public surface shows in review.
 *
 *   node scripts/api-report.mjs           check: fails (exit 1) when a report differs from the
 *                                         built declarations (CI runs this)
 *   node scripts/api-report.mjs --update  rewrite the reports (commit them with the change)
 *
 * Needs the packages built (`npm run build`). One entry point per package.json "exports" key.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const update = process.argv.includes('--update');
const packages = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces;
const temp = mkdtempSync(join(tmpdir(), 'a2ad-api-'));
let failed = 0;

for (const dir of packages) {
  const folder = join(root, dir);
  const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  mkdirSync(join(folder, 'api'), { recursive: true });
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target !== 'object' || !target.types) continue;
    const reportName = `${(manifest.name + subpath.slice(1)).replace(/^@/, '').replace(/\//g, '-')}.api.md`;
    const config = ExtractorConfig.prepare({
      configObjectFullPath: join(folder, 'api-extractor.json'),
      packageJsonFullPath: join(folder, 'package.json'),
      configObject: {
        projectFolder: folder,
        mainEntryPointFilePath: join(folder, target.types),
        bundledPackages: [],
        compiler: {
          overrideTsconfig: {
            compilerOptions: { target: 'ES2022', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: ['node'] },
            include: [join(folder, 'dist')],
          },
        },
        apiReport: { enabled: true, reportFileName: reportName, reportFolder: join(folder, 'api'), reportTempFolder: temp },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          compilerMessageReporting: { default: { logLevel: 'warning' } },
          extractorMessageReporting: {
            default: { logLevel: 'warning' },
            // Release tags (@public/@beta) are not used: every export of an entry is public.
            'ae-missing-release-tag': { logLevel: 'none' },
            // Documentation is reviewed in the docs and by the doc-comment lint, not here.
            'ae-undocumented': { logLevel: 'none' },
            // {@link Class.member} in doc comments: TypeScript resolves them; TSDoc's syntax differs.
            'ae-unresolved-link': { logLevel: 'none' },
            // A type an entry refers to but exports under another entry (the /adk entry names the
            // core's SnapshotStore): its name shows in the signatures; the warning would carry a
            // source line number that churns with every unrelated edit.
            'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: false },
          },
          tsdocMessageReporting: { default: { logLevel: 'none' } },
        },
      },
    });
    const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false, messageCallback: (m) => { if (m.logLevel === 'warning' && !String(m.messageId).startsWith('ae-')) m.logLevel = 'none'; } });
    const state = result.apiReportChanged ? (update ? 'updated' : 'CHANGED') : 'unchanged';
    if (!result.succeeded) console.error(`${manifest.name}${subpath}: ${result.errorCount} error(s), ${result.warningCount} warning(s)`);
    console.log(`${state.padEnd(9)} ${manifest.name}${subpath === '.' ? '' : subpath.slice(1)} -> ${dir}/api/${reportName}`);
    if (!result.succeeded || (result.apiReportChanged && !update)) failed++;
  }
}
rmSync(temp, { recursive: true, force: true });
if (failed > 0) {
  console.error(`\n${failed} API report(s) differ from the built packages: the public surface changed. If that is intended, run \`npm run api:update\` and commit packages/*/api/*.api.md with the change.`);
  process.exit(1);
}
