import { recordRun, runBackfill } from '../../sync/index.js';
import { RECORD_ENTITIES } from '../../entities/index.js';
import type { GlobalFlags } from '../../session/index.js';
import { logBackfillSummary } from '../backfill-summary.js';
import { Progress } from '../progress.js';
import { openWriter } from '../session.js';
import type { SecretRedactor } from '../../util/redact.js';

export async function backfillCommand(flags: GlobalFlags, opts: { history?: string | boolean }, redactor: SecretRedactor): Promise<void> {
  const session = await openWriter(flags, redactor);
  try {
    const { ctx, res } = session;
    const history = opts.history === true ? 'all' : typeof opts.history === 'string' ? opts.history : res.config.history;
    const progress = new Progress(res.logger);
    const { result, stats, durationMs } = await recordRun(ctx, 'backfill', (s) =>
      runBackfill(ctx, s, { head: session.head, history, onProgress: (p) => progress.update(p.phase, p.copied) }),
    );
    progress.done();
    logBackfillSummary(res.logger, result, stats, durationMs);
    process.stdout.write(
      result.phase === 'done'
        ? `Backfill complete: ${RECORD_ENTITIES.map((e) => `${result.copied[e.plural]} ${e.plural}`).join(', ')}${result.copied.events ? `, ${result.copied.events} events` : ''} in ${(durationMs / 1000).toFixed(1)} s (${stats.requests} requests, ${stats.retries} retries, ${stats.quarantined} quarantined).\n`
        : `Backfill stopped in phase ${result.phase}; run \`wsmirror backfill\` again to resume.\n`,
    );
  } finally {
    await session.life.close();
  }
}
