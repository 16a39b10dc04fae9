import { emptyStats, repairTarget, runVerify, type RepairResult, type VerifyResult } from '../../sync/index.js';
import { EXIT, ExitError } from '../../util/errors.js';
import { openClient, syncContext, type GlobalFlags } from '../../session/index.js';
import { openReader, usageError } from '../session.js';
import type { SecretRedactor } from '../../util/redact.js';
import { DEFAULT_WAIT_SECONDS, runWriterRequest } from '../writer-request.js';
import { waitOption } from './resync.js';

/** How to mend drift, whether or not a daemon holds the mirror. */
export const REPAIR_ADVICE =
  'run `wsmirror verify --repair` to re-read them. It works with the daemon (`wsmirror run`) running: ' +
  `the daemon re-reads them at its next cycle while the command waits (\`--wait <seconds>\`, default ${DEFAULT_WAIT_SECONDS}).`;

export interface VerifyOptions {
  repair?: boolean;
  json?: boolean;
  settle?: string;
  wait?: string;
}

/**
 * `verify` compares as a reader (no lock). Exit 5 when drift is found and not repaired; changes in
 * flight (made after the mirror's as-of) are listed apart and exit 0. With --repair what differs
 * goes to the writer: this process when the lock is free, else the daemon through its inbox
 * (docs/sync.md, "Verify"); exit 0 once mended, 5 when some record could not be.
 */
export async function verifyCommand(flags: GlobalFlags, opts: VerifyOptions, redactor: SecretRedactor): Promise<void> {
  // A repair re-reads the changes in flight too, so a second look would only wait.
  if (opts.wait !== undefined && !opts.repair)
    throw usageError('--wait goes with --repair: how long to wait for the daemon to serve the repair.');
  const settleMs = opts.repair ? 0 : settleOption(opts.settle);
  const waitSeconds = opts.repair ? waitOption(opts.wait) : 0;
  const { res, life, store } = await openReader(flags, redactor);
  let result: VerifyResult;
  let quarantined: number;
  try {
    const ctx = syncContext(res, store, openClient(res, life), life);
    result = await runVerify(ctx, emptyStats(), { repair: false, settleMs });
    quarantined = opts.repair ? (await store.quarantinedRecords()).length : 0;
  } finally {
    await life.close();
  }
  if (!opts.repair) {
    print(result, opts.json);
    if (result.drift.length > 0) {
      throw new ExitError(
        EXIT.drift,
        `The mirror differs from the workspace in ${result.drift.length} place(s) it should already hold (changes made before its as-of ${result.asOf ?? 'unknown'}); ${REPAIR_ADVICE}`,
        { code: 'DRIFT' },
      );
    }
    return;
  }
  await repairFound(flags, redactor, result, { json: opts.json, waitSeconds, quarantined });
}

/** Hands what verify found to the writer (src/cli/writer-request.ts) and says how the repair ended. */
async function repairFound(
  flags: GlobalFlags,
  redactor: SecretRedactor,
  result: VerifyResult,
  opts: { json?: boolean; waitSeconds: number; quarantined: number },
): Promise<void> {
  const target = repairTarget([...result.drift, ...result.inFlight]);
  if (!opts.json) print(result, false);
  if (target.records.length === 0 && !target.pipelines && opts.quarantined === 0) {
    if (opts.json) print(result, true);
    return;
  }
  const repair = (await runWriterRequest(flags, redactor, 'verify', target, { waitSeconds: opts.waitSeconds })) as RepairResult | null;
  if (opts.json) process.stdout.write(`${JSON.stringify({ ...result, repaired: repair?.reread ?? 0, repair }, null, 2)}\n`);
  if (!repair) return;
  if (!opts.json) {
    process.stdout.write(
      `Repaired: ${repair.marked} record(s) marked, ${repair.reread} re-read${repair.pipelines ? `, ${repair.pipelines} pipeline(s) written again` : ''}; ${repair.unrepaired.length} not mended.\n`,
    );
    for (const u of repair.unrepaired.slice(0, 50)) process.stdout.write(`  - ${u.entityType} ${u.entityId}: ${u.why}\n`);
  }
  if (repair.unrepaired.length > 0) {
    throw new ExitError(
      EXIT.drift,
      `${repair.unrepaired.length} record(s) still differ after the repair: a pending one's read failed (the next cycle reads it again), a quarantined one's copy is refused (its reason is in \`wsmirror status\`); run \`wsmirror verify\` again later.`,
      { code: 'DRIFT' },
    );
  }
}

function settleOption(text: string | undefined): number {
  if (text === undefined) return 10_000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 600)
    throw usageError(`--settle must be a number of seconds from 0 to 600, not ${JSON.stringify(text)}.`);
  return seconds * 1000;
}

function print(result: VerifyResult, json?: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const { checked, drift, inFlight, repaired } = result;
  const lists = Object.entries(checked).map(([list, n]) => `${n} ${list}`);
  const flight =
    inFlight.length === 0
      ? ''
      : `; ${inFlight.length} change(s) in flight (made upstream after the mirror's as-of ${result.asOf}: not drift, the next cycle brings them)`;
  process.stdout.write(
    `Checked ${lists.join(', ')}: ${drift.length === 0 ? 'no drift' : `${drift.length} difference(s)`}${flight}${repaired ? `, ${repaired} record(s) re-read` : ''}.\n`,
  );
  list(drift, '');
  if (inFlight.length > 0) {
    process.stdout.write('In flight:\n');
    list(inFlight, ', changed upstream at ');
  }
  if (result.changeLogTruncated)
    process.stdout.write('The mirror is far behind its workspace: run `wsmirror sync` (or start the daemon), then verify again.\n');
}

function list(items: ReadonlyArray<VerifyResult['drift'][number] & { changedAt?: string | null }>, at: string): void {
  for (const d of items.slice(0, 50)) {
    const what = d.field ? `${d.field}: ` : '';
    const when = d.changedAt ? `${at}${d.changedAt}` : '';
    process.stdout.write(
      `  - ${d.entityType} ${d.entityId}: ${d.kind} (${what}upstream ${String(d.upstream)}, mirror ${String(d.mirror)}${when})\n`,
    );
  }
  if (items.length > 50) process.stdout.write(`  … and ${items.length - 50} more (use --json for all)\n`);
}
