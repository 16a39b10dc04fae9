import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { configSchema } from '../../config/index.js';
import { startSimulator } from '../../simulator/index.js';
import { recordRun, runBackfill } from '../../sync/index.js';
import { Lifecycle, openClient, resourcesFor, syncContext, openWriterSession } from '../../session/index.js';
import { SecretRedactor } from '../../util/redact.js';
import { usageError } from '../session.js';
import { readHeadlines } from '../../report/index.js';
import { printMirrorCounts } from './mirror-counts.js';
import { formatHeadlines } from './report.js';
import { syncOnce } from '../../sync/index.js';

const DEMO_KEY = 'demo-key';

/**
 * The README's first command: a seeded simulator with live activity on a free port, a backfill
 * into ./data/demo.sqlite, a few sync cycles, then what happened and what the mirror says.
 */
export async function demoCommand(opts: { database: string; tickets: string; deals: string; cycles: string }): Promise<void> {
  const tickets = Number(opts.tickets);
  const deals = Number(opts.deals);
  const cycles = Number(opts.cycles);
  if (![tickets, deals, cycles].every((n) => Number.isInteger(n) && n >= 0))
    throw usageError('--tickets, --deals and --cycles must be whole numbers.');
  const database = resolve(opts.database);
  // A fresh simulator starts a new workspace, so an old demo mirror would only disagree with it.
  for (const suffix of ['', '-wal', '-shm', '.lock']) rmSync(`${database}${suffix}`, { force: true });

  const life = new Lifecycle();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const started = Date.now();
    out(`Starting the workspace simulator (${tickets} tickets, ${deals} deals, live activity of 20 writes/s)…`);
    const sim = await startSimulator({ tickets, deals, seed: 42, activity: 20, apiKeys: { [DEMO_KEY]: '' } });
    life.defer(() => sim.close());
    const config = configSchema.parse({
      baseUrl: sim.url,
      apiKey: DEMO_KEY,
      database,
      maxRequestsPerSecond: 500,
      concurrency: 8,
      lookbackSeconds: 30,
      logLevel: process.env.WSMIRROR_LOG_LEVEL ?? 'warn',
    });
    const res = resourcesFor(config, new SecretRedactor());
    const client = openClient(res, life);
    const { store } = await openWriterSession(res, life, { client, lock: { wait: false } });
    const ctx = syncContext(res, store, client, life);

    out(`Backfilling into ${database}…`);
    const backfill = await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s));
    out(
      `  ${backfill.result.copied.tickets} tickets (with messages) and ${backfill.result.copied.deals} deals in ${(backfill.durationMs / 1000).toFixed(1)} s, ${backfill.stats.requests} requests.`,
    );
    for (let i = 1; i <= cycles; i++) {
      await new Promise((r) => setTimeout(r, 1500));
      const s = await syncOnce(ctx, 'sync', null);
      out(
        `Sync ${i}: ${s.stats.eventsRead} events read, ${s.stats.eventsNew} new, ${s.stats.recordsFetched} records re-read, ${s.stats.requests} requests in ${(s.durationMs / 1000).toFixed(2)} s; lag ${s.lagSeconds ?? '?'} s.`,
      );
    }
    out('');
    await printMirrorCounts(store, out);
    out('');
    for (const line of formatHeadlines(await readHeadlines(store))) out(line);
    out('');
    out(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s. Explore the mirror with:`);
    out(`  sqlite3 -readonly ${database} "select status, count(*) from tickets where deleted_at is null group by status"`);
    out(`  npx wsmirror status --database ${database}`);
  } finally {
    await life.close();
  }
}
