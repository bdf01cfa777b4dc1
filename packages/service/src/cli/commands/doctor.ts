/**
 * `a2a-discovery doctor --config <file>`: its options and help (its bounds: `DOCTOR_BOUNDS`,
 * flags.ts). The checks (doctor.ts) load when the command runs.
 *
 * @module
 */
import type { Command } from 'commander';
import { COMMANDS, DOCTOR_BOUNDS, type Io } from '../flags.js';

/** Adds `doctor` to the program. */
export function registerDoctorCommand(program: Command, io: Io): void {
  program
    .command('doctor')
    .description(COMMANDS.doctor.description)
    .requiredOption('--config <file>', 'the discovery.yaml to check')
    .option('--json', 'print one JSON object instead of text', false)
    .addHelpText(
      'after',
      `
Checks, in order (ids stable): config, store, token-file, port, loopback, allowlist, oidc (with
server.oidc), reach:<config path> (one guarded request per source URL: static entries, well-known
domains, AI Catalogs, registries, ARD sources; ${DOCTOR_BOUNDS.requestTimeoutMs / 1000} s each, ${DOCTOR_BOUNDS.totalDeadlineMs / 1000} s in all), clock (the local clock
against the Date header of the answers; warn past ${DOCTOR_BOUNDS.maxSkewMs / 1000} s). An invalid configuration stops after config
(when it does not parse). The store is read, never written.
Each line: ok|warn|fail  <check>  <what was found and what to do>.

Exit codes: 0 no fail, 1 any fail, 2 usage error (missing --config, unreadable file).
JSON (--json): {ok, checks [{id, status (ok, warn, fail), message, detail?}]}.

Examples:
  a2a-discovery doctor --config /etc/a2a/discovery.yaml
  a2a-discovery doctor --config discovery.yaml --json | jq '.checks[] | select(.status != "ok")'`,
    )
    .action(async (opts: { config: string; json: boolean }) => {
      const { runDoctor } = await import('../doctor.js');
      const checks = await runDoctor(opts.config);
      const ok = !checks.some((c) => c.status === 'fail');
      if (opts.json) io.out(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
      else io.out(`${checks.map((c) => `${c.status.padEnd(4)}  ${c.id}  ${c.message}`).join('\n')}\n`);
      process.exitCode = ok ? 0 : 1;
    });
}
