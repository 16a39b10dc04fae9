import { emptyStats, recordRun, runVerify, type VerifyResult } from '../../sync/index.js';
import { EXIT, ExitError } from '../../util/errors.js';
import { openClient, syncContext, type GlobalFlags } from '../resources.js';
import { openReader, openWriter, usageError } from '../session.js';
import type { SecretRedactor } from '../../util/redact.js';

/**
 * Writing the repair needs the writer's lock, which a running daemon holds: how to repair then,
 * whichever way the daemon was started.
 */
export const REPAIR_ADVICE =
  'run `wsmirror verify --repair` to re-read them. It takes the writer lock, so with a daemon (`wsmirror run`) on this mirror: ' +
  'stop the daemon (SIGTERM, or `docker stop`), run `wsmirror verify --repair` with the same config, then start the daemon again ' +
  '(its nightly reconcile, `reconcileSchedule`, also repairs drift without stopping it).';

/**
 * Without --repair verify is a reader (no lock); with it, a writer. Exit 5 when drift is found and
 * not repaired; changes in flight (made after the mirror's as-of) are listed apart and exit 0.
 */
export async function verifyCommand(
  flags: GlobalFlags,
  opts: { repair?: boolean; json?: boolean; settle?: string },
  redactor: SecretRedactor,
): Promise<void> {
  const settleMs = settleOption(opts.settle);
  if (opts.repair) {
    const session = await openWriter(flags, redactor);
    try {
      // This process is the writer: nothing else moves the as-of, so a second look would only wait.
      const { result } = await recordRun(session.ctx, 'verify', (s) => runVerify(session.ctx, s, { repair: true, settleMs: 0 }));
      print(result, opts.json);
    } finally {
      await session.life.close();
    }
    return;
  }
  const { res, life, store } = await openReader(flags, redactor);
  try {
    const ctx = syncContext(res, store, openClient(res, life), life);
    const result = await runVerify(ctx, emptyStats(), { repair: false, settleMs });
    print(result, opts.json);
    if (result.drift.length > 0) {
      throw new ExitError(
        EXIT.drift,
        `The mirror differs from the workspace in ${result.drift.length} place(s) it should already hold (changes made before its as-of ${result.asOf ?? 'unknown'}); ${REPAIR_ADVICE}`,
        { code: 'DRIFT' },
      );
    }
  } finally {
    await life.close();
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
