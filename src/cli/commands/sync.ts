import { syncOnce } from '../../sync/index.js';
import type { GlobalFlags } from '../../session/index.js';
import { openWriter } from '../session.js';
import type { SecretRedactor } from '../../util/redact.js';

export async function syncCommand(flags: GlobalFlags, redactor: SecretRedactor): Promise<void> {
  const session = await openWriter(flags, redactor);
  try {
    const summary = await syncOnce(session.ctx, 'sync', session.head);
    process.stdout.write(
      `Sync ${summary.result.stopped ? 'stopped early' : 'complete'}: ${summary.stats.eventsRead} events read (${summary.stats.eventsNew} new), ${summary.stats.recordsFetched} records fetched, ${summary.stats.requests} requests in ${(summary.durationMs / 1000).toFixed(1)} s; lag ${summary.lagSeconds ?? 'unknown'} s.\n`,
    );
  } finally {
    await session.life.close();
  }
}
