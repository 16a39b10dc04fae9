import { emptyStats, recordRun, runVerify } from '../../sync/index.js';
import { EXIT, ExitError } from '../../util/errors.js';
import { openClient, syncContext, type GlobalFlags } from '../resources.js';
import { openReader, openWriter } from '../session.js';
import type { SecretRedactor } from '../../util/redact.js';

/**
 * Without --repair verify is a reader (no lock); with it, a writer. Exit 5 when drift is found
 * and not repaired.
 */
export async function verifyCommand(
  flags: GlobalFlags,
  opts: { repair?: boolean; json?: boolean },
  redactor: SecretRedactor,
): Promise<void> {
  if (opts.repair) {
    const session = await openWriter(flags, redactor);
    try {
      const { result } = await recordRun(session.ctx, 'verify', (s) => runVerify(session.ctx, s, { repair: true }));
      print(result, opts.json);
    } finally {
      await session.life.close();
    }
    return;
  }
  const { res, life, store } = await openReader(flags, redactor);
  try {
    const ctx = syncContext(res, store, openClient(res, life), life);
    const result = await runVerify(ctx, emptyStats(), { repair: false });
    print(result, opts.json);
    if (result.drift.length > 0) {
      throw new ExitError(
        EXIT.drift,
        `The mirror differs from the workspace in ${result.drift.length} place(s); run \`wsmirror verify --repair\` to re-read them.`,
        { code: 'DRIFT' },
      );
    }
  } finally {
    await life.close();
  }
}

function print(result: Awaited<ReturnType<typeof runVerify>>, json?: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const { checked, drift, repaired } = result;
  const lists = Object.entries(checked).map(([list, n]) => `${n} ${list}`);
  process.stdout.write(
    `Checked ${lists.join(', ')}: ${drift.length === 0 ? 'no drift' : `${drift.length} difference(s)`}${repaired ? `, ${repaired} record(s) re-read` : ''}.\n`,
  );
  for (const d of drift.slice(0, 50)) {
    const what = d.field ? `${d.field}: ` : '';
    process.stdout.write(
      `  - ${d.entityType} ${d.entityId}: ${d.kind} (${what}upstream ${String(d.upstream)}, mirror ${String(d.mirror)})\n`,
    );
  }
  if (drift.length > 50) process.stdout.write(`  … and ${drift.length - 50} more (use --json for all)\n`);
}
