/**
 * One measured job of the benchmark, run in its own process so each figure (time, peak RSS) is
 * its own. Prints one JSON line. Modes: wsmirror-backfill, raw-backfill, wsmirror-sync, raw-sync,
 * load.
 */
import { Pool } from 'undici';
import { createApiClient } from '../src/api/index.js';
import { silentLogger } from '../src/log/index.js';
import { openStore } from '../src/store/index.js';
import { emptyStats, runBackfill, runSyncCycle, type SyncContext } from '../src/sync/index.js';
import { mapConcurrent } from '../src/util/concurrency.js';

const [mode, url, arg] = process.argv.slice(2) as [string, string, string | undefined];
const KEY = 'bench-key';
const CONCURRENCY = 8;
const PAGE = 100;

/** The arg of the wsmirror modes: where the mirror is and how fast the client may go. */
interface MirrorJob {
  database: string;
  /** Default 100000: unthrottled, so the figure is wsmirror's own cost. */
  maxRequestsPerSecond?: number | 'auto';
  maxRequestsPerSecondCeiling?: number;
}

async function wsmirror(kind: 'backfill' | 'sync'): Promise<object> {
  const job = JSON.parse(arg!) as MirrorJob;
  const store = await openStore({ database: job.database });
  await store.migrate();
  const client = createApiClient({
    baseUrl: url, apiKey: KEY, concurrency: CONCURRENCY, pageSize: PAGE,
    maxRequestsPerSecond: job.maxRequestsPerSecond ?? 100_000, maxRequestsPerSecondCeiling: job.maxRequestsPerSecondCeiling,
  });
  const ctx: SyncContext = {
    store,
    client,
    logger: silentLogger(),
    config: { lookbackSeconds: 300, pageSize: PAGE, concurrency: CONCURRENCY },
    stopSignal: new AbortController().signal,
    now: () => new Date().toISOString(),
  };
  const stats = emptyStats();
  const started = performance.now();
  if (kind === 'backfill') await runBackfill(ctx, stats);
  else await runSyncCycle(ctx, stats);
  const ms = performance.now() - started;
  const { requests, rateLimited } = client.stats();
  await client.close();
  await store.close();
  return { ms, requests, rateLimited, records: stats.recordsFetched, events: stats.eventsRead };
}

/** The same requests as wsmirror makes, with nothing done to the answers: the floor to compare with. */
async function raw(kind: 'backfill' | 'sync'): Promise<object> {
  const pool = new Pool(url, { connections: CONCURRENCY });
  let requests = 0;
  const get = async (path: string): Promise<any> => {
    requests++;
    const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${KEY}` } });
    return res.body.json();
  };
  const started = performance.now();
  if (kind === 'backfill') {
    await get('/api/v1/events?limit=1');
    await get('/api/v1/pipelines');
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: any = await get(`/api/v1/deals?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      cursor = page.nextCursor;
    }
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: any = await get(`/api/v1/tickets?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      await mapConcurrent(page.tickets as Array<{ id: string }>, CONCURRENCY, async (t) => void (await get(`/api/v1/tickets/${t.id}`)));
      cursor = page.nextCursor;
    }
  } else {
    await get('/api/v1/pipelines');
    const touched = new Set<string>();
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: any = await get(`/api/v1/events?limit=${PAGE}&since=${encodeURIComponent(arg!)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      for (const e of page.events as Array<{ entityType: string; entityId: string }>) {
        if (e.entityType === 'ticket' || e.entityType === 'deal') touched.add(`${e.entityType}s/${e.entityId}`);
      }
      cursor = page.nextCursor;
    }
    await mapConcurrent([...touched], CONCURRENCY, async (p) => void (await get(`/api/v1/${p}`)));
  }
  const ms = performance.now() - started;
  await pool.close();
  return { ms, requests };
}

/** Loopback load on GET /tickets/:id with pipelining, for the simulator's own capacity. */
async function load(): Promise<object> {
  const ids = JSON.parse(arg!) as string[];
  const pool = new Pool(url, { connections: 16, pipelining: 8 });
  const durationMs = 4000;
  let done = 0;
  const end = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: 128 }, async (_, w) => {
      for (let i = w; performance.now() < end; i += 128) {
        const res = await pool.request({ method: 'GET', path: `/api/v1/tickets/${ids[i % ids.length]}`, headers: { authorization: `Bearer ${KEY}` } });
        await res.body.dump();
        if (res.statusCode === 200) done++;
      }
    }),
  );
  await pool.close();
  return { requests: done, perSecond: Math.round(done / (durationMs / 1000)) };
}

const result =
  mode === 'wsmirror-backfill' ? await wsmirror('backfill')
  : mode === 'wsmirror-sync' ? await wsmirror('sync')
  : mode === 'raw-backfill' ? await raw('backfill')
  : mode === 'raw-sync' ? await raw('sync')
  : mode === 'load' ? await load()
  : (() => { throw new Error(`unknown mode ${mode}`); })();
process.stdout.write(`${JSON.stringify({ ...result, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`);
