/**
 * Freshness: `wsmirror run` on a schedule against a rate-limited simulator with live writes; for
 * every write, the delay until the mirror shows it (bench/README.md, "Freshness"). With
 * `"continuous"` the daemon backfills the empty mirror itself under the ceiling and the writes
 * start at its first sync, so the first writes are the ones right after a backfill; each write is
 * also waited for through the daemon's `GET /wait` for that record.
 *
 * The harness makes the writes itself (control `act`, one random write each, at a steady rate)
 * so it knows each write's record and time, and polls the SQLite mirror (read-only, as a BI tool
 * would) every POLL_MS: a write is visible once its record's row has an `updated_at` at or after
 * the write, or shows the record deleted, a state later than the write (writes go to live records
 * only); for a deleted deal, once the row is marked deleted or absent. Writes never seen are then
 * checked against the simulator's ground truth: a record deleted upstream that the mirror shows
 * deleted or never held was superseded (its copy was gone before any sync could read it), anything
 * else is a miss.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { cli, control, KEY, startSim, takeRequests } from './sim.js';
import { toDbTimestamp } from '../src/util/time.js';
import { freePort } from './free-port.js';

const POLL_MS = 200;
/** After the writes, the daemon's requests are counted this long with nothing to find: the idle cost. */
const IDLE_MS = 15_000;

export interface FreshnessFigures {
  schedule: string;
  periodSeconds: number;
  writesPerSecond: number;
  allowance: number;
  seconds: number;
  writes: number;
  visible: number;
  p50Ms: number | null;
  p95Ms: number | null;
  maxMs: number | null;
  /** p95 / schedule period. */
  p95Periods: number | null;
  /** p95 of the first and last third of the writes: a growing backlog shows as last ≫ first. */
  p95FirstThirdMs: number | null;
  p95LastThirdMs: number | null;
  keepsUp: boolean;
  /** Writes shown only by the record's later deletion (`deleted_at` set), counted as visible. */
  shownDeleted: number;
  /** Writes never seen whose record was deleted upstream, and absent or deleted in the mirror. */
  superseded: number;
  /** Writes never seen for any other reason: the mirror is behind the simulator (a gap). */
  missed: number;
  requests: number;
  rateLimited: number;
  /** Change-log requests, against the goal's budget: 1.2 × ceil(new events / 100) + one per tick. */
  eventRequests: number;
  newEvents: number;
  /** Times the schedule fired while the writes were made and watched (boundaries crossed). */
  ticks: number;
  /** Sync cycles the daemon ran meanwhile (its sync_runs): ticks, less any it skipped, plus catch-up cycles. */
  cycles: number;
  eventRequestBudget: number;
  /** Requests the daemon made while the workspace was idle, per hour (measured over IDLE_MS). */
  idleRequestsPerHour: number;
  /** `run` backfilled the empty mirror under the ceiling and the writes began at its first sync. */
  fromBackfill: boolean;
  /** GET /wait for each written record: from the write to its 200, and how many never got one. */
  recordWait: { answered: number; failed: number; p50Ms: number | null; p95Ms: number | null; maxMs: number | null } | null;
}

interface Write {
  entityType: string;
  entityId: string;
  kind: string;
  wallMs: number;
  /** The record's updatedAt once written (the simulator's clock): the mirror shows it when it holds the write. */
  simMs: number;
  delayMs?: number;
  /** From the write to the 200 of GET /wait for its record; undefined when it never came. */
  waitMs?: number;
  /** Seen only as the record's deletion. */
  shownDeleted?: boolean;
}

/**
 * Seconds between ticks of a `*\/n` seconds pattern; 60 for anything else with a fixed second; 1
 * for "continuous", whose cycles follow each other (its figures per period are then per second).
 */
export function periodOf(schedule: string): number {
  if (schedule === 'continuous') return 1;
  const m = /^\*\/(\d+)\s/.exec(schedule);
  return m ? Number(m[1]) : 60;
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? null;
}

/** Delays of `writes`, sorted, with writes never seen counted as infinitely late. */
function delays(writes: Write[]): number[] {
  return writes.map((w) => w.delayMs ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
}

const finite = (n: number | null) => (n === null || !Number.isFinite(n) ? null : Math.round(n));

function cliRun(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, ...args], { env, maxBuffer: 1 << 26 }, (err, _out, stderr) =>
      err ? reject(new Error(`wsmirror ${args.join(' ')} failed: ${stderr}`)) : resolve(),
    );
  });
}

function parseTime(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Date.parse(v);
  return Number.NaN;
}

/** Marks writes whose record the mirror now shows; returns how many are still pending. */
function poll(db: Database.Database, pending: Write[], now: number): Write[] {
  const still: Write[] = [];
  for (const table of ['tickets', 'deals'] as const) {
    const mine = pending.filter((w) => `${w.entityType}s` === table);
    for (let i = 0; i < mine.length; i += 500) {
      const chunk = mine.slice(i, i + 500);
      const ids = [...new Set(chunk.map((w) => w.entityId))];
      const rows = db
        .prepare(`SELECT id, updated_at, deleted_at FROM ${table} WHERE id IN (${ids.map(() => '?').join(',')})`)
        .all(...ids) as Array<{ id: string; updated_at: unknown; deleted_at: unknown }>;
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const w of chunk) {
        const row = byId.get(w.entityId);
        const deleted = row !== undefined && row.deleted_at !== null && row.deleted_at !== undefined;
        const current = row !== undefined && parseTime(row.updated_at) >= w.simMs;
        const seen = w.kind === 'delete_deal' ? row === undefined || deleted : current || deleted;
        if (!seen) {
          still.push(w);
          continue;
        }
        w.delayMs = now - w.wallMs;
        if (w.kind !== 'delete_deal' && !current) w.shownDeleted = true;
      }
    }
  }
  return still;
}

/** Sync cycles started between t0 and t1 (ms), from the mirror's sync_runs. */
function syncCycles(database: string, t0: number, t1: number): number {
  const db = new Database(database, { readonly: true, fileMustExist: true });
  try {
    // The stored form (docs/schema.md) is compared as text.
    const at = (ms: number) => toDbTimestamp(new Date(ms));
    const row = db
      .prepare(`SELECT count(*) AS n FROM sync_runs WHERE kind = 'sync' AND started_at >= ? AND started_at <= ?`)
      .get(at(t0), at(t1)) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

/**
 * Splits the writes never seen: superseded (deleted upstream, and absent or deleted in the
 * mirror: nothing to show) or missed (the mirror is behind the simulator's ground truth).
 */
async function classifyUnseen(url: string, database: string, pending: Write[]): Promise<{ superseded: Write[]; missed: Write[] }> {
  if (pending.length === 0) return { superseded: [], missed: [] };
  const truth = (await control(url, 'GET', 'truth')) as {
    tickets: Array<{ id: string; updatedAt: string }>;
    deals: Array<{ id: string; updatedAt: string }>;
    hiddenTickets: Array<{ id: string }>;
    deletedDealIds: string[];
  };
  const goneUpstream = new Set([...truth.hiddenTickets.map((t) => t.id), ...truth.deletedDealIds]);
  const upstreamUpdatedAt = new Map([...truth.tickets, ...truth.deals].map((r) => [r.id, r.updatedAt]));
  const db = new Database(database, { readonly: true, fileMustExist: true });
  try {
    const superseded: Write[] = [];
    const missed: Write[] = [];
    for (const w of pending) {
      const row = db.prepare(`SELECT updated_at, deleted_at FROM ${w.entityType}s WHERE id = ?`).get(w.entityId) as
        { updated_at: unknown; deleted_at: unknown } | undefined;
      const mirrorGone = row === undefined || (row.deleted_at !== null && row.deleted_at !== undefined);
      if (goneUpstream.has(w.entityId) && mirrorGone) {
        superseded.push(w);
        continue;
      }
      missed.push(w);
      if (missed.length <= 10)
        console.log(
          `  never seen: ${w.kind} ${w.entityType} ${w.entityId} written at ${new Date(w.simMs).toISOString()} (simulator time); ` +
            `mirror updated_at ${row === undefined ? 'no row' : JSON.stringify(row.updated_at)}, upstream updatedAt ${upstreamUpdatedAt.get(w.entityId) ?? 'gone'}`,
        );
    }
    return { superseded, missed };
  } finally {
    db.close();
  }
}

/** Events in the change log now (the control truth of a 1,000-ticket workspace is small). */
async function eventCount(url: string): Promise<number> {
  return ((await control(url, 'GET', 'truth')) as { events: unknown[] }).events.length;
}

async function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`wsmirror run did not log ${pattern} within ${timeoutMs} ms`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => {
      buf += d.toString();
      if (pattern.test(buf)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`wsmirror run exited ${code} before starting`)));
  });
}

/**
 * An unthrottled backfill, then the simulator's rate limit, then `run` until it holds the writer
 * lock; with `fromBackfill`, the rate limit first and `run` backfills, until its first sync cycle.
 */
async function backfillThenRun(args: FreshnessArgs, url: string, dir: string, database: string, port: number): Promise<ChildProcess> {
  const env = {
    ...process.env,
    WSMIRROR_BASE_URL: url,
    WSMIRROR_API_KEY: KEY,
    WSMIRROR_DATABASE: database,
    WSMIRROR_CONFIG: join(dir, 'backfill.json'),
  };
  if (!args.fromBackfill) {
    writeFileSync(join(dir, 'backfill.json'), JSON.stringify({ maxRequestsPerSecond: 5000, http: { port: 0 } }));
    await cliRun(['backfill'], env);
  }
  await control(url, 'POST', 'faults', { rateLimitPerSecond: args.allowance });
  await takeRequests(url);
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ schedule: args.schedule, maxRequestsPerSecond: args.allowance, http: { port } }));
  const daemon = spawn(process.execPath, [cli, 'run'], {
    env: { ...env, WSMIRROR_CONFIG: join(dir, 'run.json') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // A backfill of 1,000 tickets at 10 requests/s takes about two minutes.
  const started = args.fromBackfill ? waitForLine(daemon, /"msg":"sync cycle"/, 600_000) : waitForLine(daemon, /writer lock held/, 60_000);
  // One file per benchmark process and run, so an odd figure can be read against its daemon's log.
  daemon.stderr.pipe(
    createWriteStream(join(tmpdir(), `wsmirror-bench-freshness-${process.pid}-${periodOf(args.schedule)}s-${args.writesPerSecond}wps.log`)),
  );
  await started;
  return daemon;
}

/**
 * Evenly spaced writes through the control surface for `seconds`, polling the mirror read-only
 * between them, then at most `graceSeconds` more for the last ones; returns the writes and those
 * never seen.
 */
async function writeAndWatch(
  args: FreshnessArgs,
  url: string,
  database: string,
  port: number,
): Promise<{ writes: Write[]; pending: Write[]; t0: number }> {
  const waits: Promise<void>[] = [];
  const stopWaits = new AbortController();
  const db = new Database(database, { readonly: true, fileMustExist: true });
  const writes: Write[] = [];
  let pending: Write[] = [];
  const t0 = Date.now();
  const total = Math.round(args.writesPerSecond * args.seconds);
  let nextPoll = t0;
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / args.writesPerSecond;
    // Polled here too, not only while waiting: a harness behind its write schedule (a loaded
    // machine) never waits, and would otherwise see nothing until the grace period.
    do {
      if (Date.now() >= nextPoll) {
        pending = poll(db, pending, Date.now());
        nextPoll = Date.now() + POLL_MS;
      }
      if (Date.now() >= due) break;
      await sleep(Math.max(0, Math.min(due, nextPoll) - Date.now()));
    } while (Date.now() < due);
    const wallMs = Date.now();
    const { activity } = (await control(url, 'POST', 'act', { count: 1 })) as {
      activity: Array<{ kind: string; entityType: string; entityId: string; updatedAt: string }>;
    };
    for (const { updatedAt, ...a } of activity) {
      if (a.entityType !== 'ticket' && a.entityType !== 'deal') continue;
      // The write's own upstream time, as the simulator stamped it: estimating it from this
      // process's clock was 5-20 ms off under load, enough to count a write seen as missed.
      const w: Write = { ...a, wallMs, simMs: Date.parse(updatedAt) };
      writes.push(w);
      pending.push(w);
      waits.push(recordWait(port, w, stopWaits.signal));
    }
  }
  const deadline = Date.now() + args.graceSeconds * 1000;
  while (pending.length > 0 && Date.now() < deadline) {
    await sleep(POLL_MS);
    pending = poll(db, pending, Date.now());
  }
  db.close();
  // What the grace period did not answer is never answered: counted as failed, not waited for.
  stopWaits.abort();
  await Promise.all(waits);
  return { writes, pending, t0 };
}

/** GET /wait for the written record (its updatedAt as the simulator stamped it); sets `waitMs` on a 200. */
async function recordWait(port: number, w: Write, signal: AbortSignal): Promise<void> {
  const query = `entity=${w.entityType}&id=${encodeURIComponent(w.entityId)}&updatedAt=${new Date(w.simMs).toISOString()}`;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/wait?${query}&timeoutMs=300000`, { signal });
    await res.arrayBuffer();
    if (res.status === 200) w.waitMs = Date.now() - w.wallMs;
  } catch {
    // Counted as never answered.
  }
}

function waitFigures(writes: Write[]): FreshnessFigures['recordWait'] {
  const answered = writes.filter((w) => w.waitMs !== undefined).map((w) => w.waitMs!);
  const all = writes.map((w) => w.waitMs ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
  return {
    answered: answered.length,
    failed: writes.length - answered.length,
    p50Ms: finite(percentile(all, 50)),
    p95Ms: finite(percentile(all, 95)),
    maxMs: finite(all.at(-1) ?? null),
  };
}

function figures(
  args: FreshnessArgs,
  made: Write[],
  unseen: { superseded: Write[]; missed: Write[] },
  seen: {
    total: number;
    byStatus: Record<string, number>;
    events: number;
    newEvents: number;
    ticks: number;
    cycles: number;
    idleRequestsPerHour: number;
  },
): FreshnessFigures {
  // A superseded write has nothing left to show: it is counted apart, not as infinitely late.
  const dropped = new Set(unseen.superseded);
  const writes = made.filter((w) => !dropped.has(w));
  const pending = unseen.missed;
  const all = delays(writes);
  const third = Math.max(1, Math.floor(writes.length / 3));
  const firstP95 = percentile(delays(writes.slice(0, third)), 95);
  const lastP95 = percentile(delays(writes.slice(-third)), 95);
  const period = periodOf(args.schedule);
  const p95 = percentile(all, 95);
  // Keeping up: every write shows up, and the last writes wait no longer than the first ones
  // (give or take one period); a backlog that grows through the run is falling behind.
  const keepsUp = pending.length === 0 && firstP95 !== null && lastP95 !== null && lastP95 <= firstP95 + period * 1000;
  return {
    schedule: args.schedule,
    periodSeconds: period,
    writesPerSecond: args.writesPerSecond,
    allowance: args.allowance,
    seconds: args.seconds,
    writes: made.length,
    visible: writes.length - pending.length,
    p50Ms: finite(percentile(all, 50)),
    p95Ms: finite(p95),
    maxMs: finite(all.at(-1) ?? null),
    p95Periods: finite(p95) === null ? null : Number(((p95 as number) / 1000 / period).toFixed(2)),
    p95FirstThirdMs: finite(firstP95),
    p95LastThirdMs: finite(lastP95),
    keepsUp,
    shownDeleted: writes.filter((w) => w.shownDeleted).length,
    superseded: unseen.superseded.length,
    missed: unseen.missed.length,
    requests: seen.total,
    rateLimited: seen.byStatus['429'] ?? 0,
    eventRequests: seen.events,
    newEvents: seen.newEvents,
    ticks: seen.ticks,
    cycles: seen.cycles,
    eventRequestBudget: Math.ceil(1.2 * Math.ceil(seen.newEvents / 100) + seen.ticks),
    idleRequestsPerHour: seen.idleRequestsPerHour,
    fromBackfill: args.fromBackfill ?? false,
    recordWait: waitFigures(writes),
  };
}

interface FreshnessArgs {
  schedule: string;
  writesPerSecond: number;
  seconds: number;
  graceSeconds: number;
  allowance: number;
  tickets: number;
  deals: number;
  /** Default: the schedule is "continuous" (its goal is measured from the first write after a backfill). */
  fromBackfill?: boolean;
}

export async function measureFreshness(options: FreshnessArgs): Promise<FreshnessFigures> {
  const args = { ...options, fromBackfill: options.fromBackfill ?? options.schedule === 'continuous' };
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-fresh-'));
  const port = await freePort();
  const sim = await startSim({ tickets: args.tickets, deals: args.deals });
  const database = join(dir, 'mirror.sqlite');
  let daemon: ChildProcess | undefined;
  try {
    daemon = await backfillThenRun(args, sim.url, dir, database, port);
    const eventsBefore = await eventCount(sim.url);
    const { writes, pending, t0 } = await writeAndWatch(args, sim.url, database, port);
    const seen = await takeRequests(sim.url);
    const newEvents = (await eventCount(sim.url)) - eventsBefore;
    const t1 = Date.now();
    // The schedule fires on wall-clock multiples of its period: count those passed, not the
    // elapsed time over the period, which is one short whenever the window straddles one more.
    const period = periodOf(args.schedule) * 1000;
    const cycles = syncCycles(database, t0, t1);
    // Continuous mode has no ticks: its budget counts one change-log request per cycle instead.
    const ticks = args.schedule === 'continuous' ? cycles : Math.floor(t1 / period) - Math.floor(t0 / period);
    const unseen = await classifyUnseen(sim.url, database, pending);
    await takeRequests(sim.url);
    await sleep(IDLE_MS);
    const idle = await takeRequests(sim.url);
    const idleRequestsPerHour = Math.round((idle.total / IDLE_MS) * 3_600_000);
    return figures(args, writes, unseen, { ...seen, newEvents, ticks, cycles, idleRequestsPerHour });
  } finally {
    if (daemon && daemon.exitCode === null) {
      const exited = new Promise((resolve) => daemon!.once('exit', resolve));
      daemon.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000).then(() => daemon!.kill('SIGKILL'))]);
    }
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
