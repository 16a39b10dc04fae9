/* eslint-disable @typescript-eslint/no-explicit-any */
import { copyFileSync } from 'node:fs';
import { createApiClient } from '../../src/api/index.js';
import { silentLogger } from '../../src/log/index.js';
import { refreshRptTables } from '../../src/report/index.js';
import { randomDialect, startSimulator, type Truth } from '../../src/simulator/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { emptyStats, recordRun, runBackfill, runSyncCycle, type SyncContext } from '../../src/sync/index.js';
import type { Dialect } from '../helpers/dialects.js';
import { diffMirror } from '../helpers/truth.js';
import { expectedHistory, unreadableRecords } from '../helpers/truth-history.js';
import { figures, incompleteReasons, WORKSPACE_TABLES } from '../report/figures.js';
import { compareBiTables } from '../report/bi-compare.js';
import { rows } from '../report/oracle.js';
import { callApi, drawsRng, play, type Life } from './life.js';
import { databaseOf } from '../../src/store/internal.js';

const KEY = 'life-key';

let template: Promise<string> | undefined;

/** A migrated, empty SQLite file made once per process: copying it is ten times cheaper than migrating. */
function sqliteTemplate(db: Dialect): Promise<string> {
  template ??= (async () => {
    const { database } = await db.newDatabase();
    const store = await openStore({ database });
    await store.migrate();
    await store.close();
    return database;
  })();
  return template;
}

/** A fresh migrated mirror of the database kind; `drop` closes and removes it. */
async function mirror(db: Dialect): Promise<{ store: Store; drop: () => Promise<void> }> {
  const target = await db.newDatabase();
  if (db.name === 'sqlite') copyFileSync(await sqliteTemplate(db), target.database);
  const store = await openStore({ database: target.database });
  await store.migrate();
  return {
    store,
    drop: async () => {
      await store.close();
      await target.drop();
    },
  };
}

/**
 * Lives one workspace life, mirrored both ways: live (a sync on every `sync` step and at the end,
 * after a `backfill --history all` of the seeded past) and after the fact (`backfill --history all`
 * into a fresh mirror). Returns every difference from the simulator's truth (empty when both are
 * exact): base tables (test/helpers/truth.ts), history rows, completeness flags and every rpt_
 * table (figures.ts), each computed from the truth alone.
 */
export async function checkLife(life: Life, db: Dialect): Promise<string[]> {
  const dialect = randomDialect(drawsRng(life.dialect));
  const sim = await startSimulator({
    seed: life.seed,
    tickets: 2,
    deals: 2,
    members: 4,
    apiKeys: { [KEY]: '' },
    control: true,
    realTime: false,
    startTime: new Date('2024-03-01T08:00:00.000Z'),
    dialect,
  });
  const client = createApiClient({
    baseUrl: sim.url,
    apiKey: KEY,
    maxRequestsPerSecond: 5000,
    retry: { maxAttempts: 2, minDelayMs: 1, maxDelayMs: 5 },
  });
  const live = await mirror(db);
  let past: Awaited<ReturnType<typeof mirror>> | undefined;
  const context = (store: Store, pageSize = 100): SyncContext => ({
    store,
    client,
    logger: silentLogger(),
    config: { lookbackSeconds: 300, pageSize, concurrency: 4, drainPlan: 'auto' },
    stopSignal: new AbortController().signal,
    now: () => new Date().toISOString(),
  });
  const backfill = (ctx: SyncContext) => recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s, { history: 'all' }));
  try {
    const ctx = context(live.store, life.paging.pageSize);
    const { removeServedAtPage, removeServedCount } = life.paging;
    sim.control.setFaults({ removeServedAtPage, removeServedCount });
    await backfill(ctx);
    // Only the backfill: a removal during the last sync's list scan would be a write no sync read after.
    sim.control.clearFaults();
    const teams = [...new Set((sim.control.truth().tickets as any[]).map((t) => t.team?.id).filter(Boolean))] as string[];
    await play(
      {
        sim,
        sync: async () => void (await runSyncCycle(ctx, emptyStats())),
        api: (method, path, body) => callApi(sim, KEY, method, path, body),
      },
      life.steps,
      teams,
    );
    await runSyncCycle(ctx, emptyStats());
    const truth = sim.control.truth();
    const diffs = (await diffMirror(databaseOf(live.store), truth)).map((d) => `live: ${d}`);
    past = await mirror(db);
    await backfill(context(past.store));
    diffs.push(...(await diffMirror(databaseOf(past.store), truth)).map((d) => `imported: ${d}`));

    const now = sim.control.now();
    for (const [name, m] of [
      ['live', live.store],
      ['imported', past.store],
    ] as const) {
      await refreshRptTables(m, { tickets: 'all', deals: 'all' }, { now });
      diffs.push(...(await compareWithTruth(m, truth, now.toISOString())).map((d) => `${name}: ${d}`));
    }
    return diffs;
  } finally {
    await client.close();
    await past?.drop();
    await live.drop();
    await sim.close();
  }
}

/** The differences of one mirror's history, flags and rpt_ tables from the truth's figures. */
async function compareWithTruth(store: Store, truth: Truth, now: string): Promise<string[]> {
  const out: string[] = [];
  const hidden = unreadableRecords(truth);
  const { mirror: got, truth: want } = await figures(store, truth, now);
  for (const t of WORKSPACE_TABLES) {
    const extra = got[t].filter((r) => !want[t].includes(r));
    const missing = want[t].filter((r) => !got[t].includes(r));
    for (const r of missing) out.push(`${t} lacks ${r}`);
    for (const r of extra) out.push(`${t} has ${r}`);
  }
  const flagged = await incompleteReasons(store);
  // The rpt_ tables hold live records only: a deleted or hidden record's flag is nowhere to read.
  const live = new Set([...(truth.tickets as any[]).map((t) => `ticket:${t.id}`), ...(truth.deals as any[]).map((d) => `deal:${d.id}`)]);
  for (const key of new Set([...flagged.keys(), ...[...hidden.keys()].filter((k) => live.has(k))]))
    if (flagged.has(key) !== hidden.has(key))
      out.push(`${key} history_complete is ${flagged.has(key) ? 0 : 1}, truth says ${hidden.has(key) ? 0 : 1}`);
  const q = `SELECT 'ticket' AS kind, ticket_id AS id, field, from_value, to_value, changed_at, source FROM ticket_history
    UNION ALL SELECT 'deal', deal_id, field, from_value, to_value, changed_at, source FROM deal_history`;
  const skip = new Set(hidden.keys());
  const history = (await rows(store, q)).filter((r: any) => !skip.has(`${r.kind}:${r.id}`));
  const stamp = (v: unknown) => {
    const iso = v instanceof Date ? v.toISOString() : String(v);
    return iso.includes('T') ? `${iso.slice(0, 10)} ${iso.slice(11, 23)}` : iso;
  };
  const keys = history.map((r: any) => `${r.id}|${r.field}|${r.from_value ?? ''}|${r.to_value ?? ''}|${stamp(r.changed_at)}|${r.source}`);
  const expected = expectedHistory(truth, skip).map((k) => `${k}|event`);
  for (const k of expected.filter((x) => !keys.includes(x))) out.push(`history lacks ${k}`);
  for (const k of keys.filter((x: string) => !expected.includes(x))) out.push(`history has ${k}`);
  // Custom field columns, versions and daily rows of the records the final truth lists.
  out.push(...(await compareBiTables(store, truth, { now, windowDays: 90, onlyKnown: true })));
  return out;
}
