/**
 * One measured job of the benchmark, run in its own process so each figure (time, peak RSS) is
 * its own. Prints one JSON line. Modes: wsmirror-backfill, raw-backfill, floor-backfill (bench/floor.ts),
 * wsmirror-sync, raw-sync, floor-sync (bench/floor-sync.ts), load.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Pool } from 'undici';
import { createApiClient } from '../src/api/index.js';
import { silentLogger } from '../src/log/index.js';
import { openStore } from '../src/store/index.js';
import { emptyStats, readWatermark, runBackfill, runSyncCycle, type SyncContext } from '../src/sync/index.js';
import { flatSteps } from './steps.js';
import { mapConcurrent } from '../src/util/concurrency.js';
import { floorBackfill } from './floor.js';
import { floorSync, type SyncWindow } from './floor-sync.js';

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
  /** floor-backfill only: store only the raw JSON the specification asks for. Default false. */
  specOnly?: boolean;
  /** floor-backfill only: the contract floor (bench/floor.ts, FloorOptions). Default false. */
  contract?: boolean;
}

async function wsmirror(kind: 'backfill' | 'sync'): Promise<object> {
  const job = JSON.parse(arg!) as MirrorJob;
  const store = await openStore({ database: job.database });
  await store.migrate();
  const client = createApiClient({
    baseUrl: url,
    apiKey: KEY,
    concurrency: CONCURRENCY,
    pageSize: PAGE,
    maxRequestsPerSecond: job.maxRequestsPerSecond ?? 100_000,
    maxRequestsPerSecondCeiling: job.maxRequestsPerSecondCeiling,
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
  const profiler = await startProfile();
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  if (kind === 'backfill') await runBackfill(ctx, stats);
  else await runSyncCycle(ctx, stats);
  const ms = performance.now() - started;
  const cpuMs = cpuSince(cpuStart);
  await profiler?.();
  const { requests, rateLimited } = client.stats();
  // Where the next sync's window starts: the raw loop reads the same window.
  const mark = await readWatermark(store);
  const watermarkMs = mark === null ? Number.NaN : Date.parse(mark);
  await client.close();
  await store.close();
  return {
    ms,
    cpuMs,
    requests,
    rateLimited,
    records: stats.recordsFetched,
    events: stats.eventsRead,
    // The cycle's wall time per step (src/sync/steps.ts), flat as every job figure is a number.
    ...(kind === 'sync' ? flatSteps(stats.steps) : {}),
    ...(Number.isFinite(watermarkMs) ? { watermarkMs } : {}),
  };
}

/**
 * With BENCH_CPU_PROFILE=FILE, a V8 CPU profile of the job alone (not the process's start, nor the
 * store's opening) is written to FILE (bench/profile.ts reads it). Returns what stops it.
 */
async function startProfile(): Promise<(() => Promise<void>) | undefined> {
  const file = process.env.BENCH_CPU_PROFILE;
  if (!file) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/** floor-backfill: the lean floor (bench/floor.ts) into `database`. */
function lean(): Promise<object> {
  const job = JSON.parse(arg!) as MirrorJob;
  return floorBackfill(url, KEY, job.database, { specOnly: job.specOnly, contract: job.contract });
}

/**
 * floor-sync: the tick's lean equivalent (bench/floor-sync.ts) on `database`, over the raw loop's
 * window; with `contract`, the tick's contract floor.
 */
function leanSync(): Promise<object> {
  const job = JSON.parse(arg!) as SyncWindow & { database: string; contract?: boolean };
  return floorSync(url, KEY, job.database, job, { contract: job.contract });
}

/** What the raw loop reads of a list page: the items are typed where it reads them. */
interface Page {
  nextCursor: string | null;
}

/** The same requests as wsmirror makes, with nothing done to the answers: the floor to compare with. */
async function raw(kind: 'backfill' | 'sync'): Promise<object> {
  const pool = new Pool(url, { connections: CONCURRENCY });
  let requests = 0;
  const get = async (path: string): Promise<unknown> => {
    requests++;
    const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${KEY}` } });
    return res.body.json();
  };
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  if (kind === 'backfill') {
    const probe = (await get('/api/v1/events?limit=1')) as { events: SyncEvent[] };
    // The log's lookback before the hand-over, read before the copy (docs/sync.md, "Backfill").
    const head = probe.events[0]?.occurredAt;
    if (head !== undefined) await pageEvents(get, new Date(Date.parse(head) - LOOKBACK_MS).toISOString());
    await get('/api/v1/pipelines');
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page = (await get(`/api/v1/deals?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)) as Page;
      cursor = page.nextCursor;
    }
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page = (await get(`/api/v1/tickets?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)) as Page & {
        tickets: { id: string }[];
      };
      await mapConcurrent(page.tickets, CONCURRENCY, async (t) => void (await get(`/api/v1/tickets/${t.id}`)));
      cursor = page.nextCursor;
    }
  } else {
    const window = JSON.parse(arg!) as SyncWindow;
    const watermarkMs = Date.parse(window.watermark);
    await get('/api/v1/pipelines');
    const events = await pageEvents(get, window.since);
    // Records changed since the watermark: those changed before it were read by the backfill or
    // the previous sync after their events were visible (docs/sync.md, "Backfill").
    const touched = new Set<string>();
    for (const e of events) {
      if ((e.entityType === 'ticket' || e.entityType === 'deal') && Date.parse(e.occurredAt) >= watermarkMs)
        touched.add(`${e.entityType}s/${e.entityId}`);
    }
    await mapConcurrent([...touched], CONCURRENCY, async (p) => void (await get(`/api/v1/${p}`)));
    const ms = performance.now() - started;
    const cpuMs = cpuSince(cpuStart);
    await pool.close();
    const floor = listPlan(events, watermarkMs);
    return {
      ms,
      cpuMs,
      requests,
      listPlan: floor,
      rulesPlan: floor - pages(events.filter((e) => Date.parse(e.occurredAt) >= watermarkMs).length) + pages(events.length),
    };
  }
  const ms = performance.now() - started;
  const cpuMs = cpuSince(cpuStart);
  await pool.close();
  return { ms, cpuMs, requests };
}

/** CPU ms of this process (every thread: the main one, SQLite's checkpoint thread, V8's and libuv's) since `start`. */
function cpuSince(start: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(start);
  return Math.round((user + system) / 1000);
}

/** Every page of the change log from `since`, newest first; returns the events. */
async function pageEvents(get: (path: string) => Promise<unknown>, since: string): Promise<SyncEvent[]> {
  const events: SyncEvent[] = [];
  for (let cursor: string | null = null, first = true; first || cursor; first = false) {
    const page = (await get(
      `/api/v1/events?limit=${PAGE}&since=${encodeURIComponent(since)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    )) as Page & { events: SyncEvent[] };
    events.push(...page.events);
    cursor = page.nextCursor;
  }
  return events;
}

const pages = (n: number) => Math.max(1, Math.ceil(n / PAGE));

interface SyncEvent {
  type: string;
  entityType: string;
  entityId: string;
  occurredAt: string;
}

const LOOKBACK_MS = 300_000;
/** Events after which only GET /tickets/:id shows the change (messages), or the list leaves the ticket out. */
const NEEDS_TICKET_READ = /^ticket\.(created|replied|note_added|customer_replied|message_removed|deleted|spam|merged)$/;

/**
 * The list-based floor of a sync (bench/README.md, "minimal plans"): the change log from the
 * watermark (no lookback re-read), pipelines, the newest-first ticket and deal list pages that
 * hold every changed record (changed records are the newest), and one GET /tickets/:id per
 * ticket whose messages changed or that the list leaves out. Deleted deals need no read.
 */
function listPlan(events: SyncEvent[], watermarkMs: number): number {
  const unseen = events.filter((e) => Date.parse(e.occurredAt) >= watermarkMs);
  const tickets = new Set<string>();
  const deals = new Set<string>();
  const ticketReads = new Set<string>();
  for (const e of unseen) {
    if (e.entityType === 'ticket') {
      tickets.add(e.entityId);
      if (NEEDS_TICKET_READ.test(e.type)) ticketReads.add(e.entityId);
    } else if (e.entityType === 'deal' && e.type !== 'deal.deleted') deals.add(e.entityId);
  }
  return 1 + pages(unseen.length) + pages(tickets.size) + pages(deals.size) + ticketReads.size;
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
        const res = await pool.request({
          method: 'GET',
          path: `/api/v1/tickets/${ids[i % ids.length]}`,
          headers: { authorization: `Bearer ${KEY}` },
        });
        await res.body.dump();
        if (res.statusCode === 200) done++;
      }
    }),
  );
  await pool.close();
  return { requests: done, perSecond: Math.round(done / (durationMs / 1000)) };
}

const result =
  mode === 'wsmirror-backfill'
    ? await wsmirror('backfill')
    : mode === 'wsmirror-sync'
      ? await wsmirror('sync')
      : mode === 'raw-backfill'
        ? await raw('backfill')
        : mode === 'raw-sync'
          ? await raw('sync')
          : mode === 'floor-backfill'
            ? await lean()
            : mode === 'floor-sync'
              ? await leanSync()
              : mode === 'load'
                ? await load()
                : (() => {
                    throw new Error(`unknown mode ${mode}`);
                  })();
process.stdout.write(`${JSON.stringify({ ...result, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`);
