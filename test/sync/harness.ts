import { join } from 'node:path';
import { createApiClient, type ApiClient } from '../../src/api/index.js';
import { silentLogger } from '../../src/log/index.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { emptyStats, recordRun, runBackfill, runSyncCycle, type RunStats, type SyncContext, type SyncHooks } from '../../src/sync/index.js';
import type { DrainPlanSetting } from '../../src/sync/plan.js';
import type { Dialect } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { diffMirror } from '../helpers/truth.js';
import { databaseOf } from '../../src/store/internal.js';

export const API_KEY = 'test-key';

export interface Harness {
  sim: Simulator;
  store: Store;
  client: ApiClient;
  ctx: SyncContext;
  database: string;
  dir: string;
  backfill(): Promise<RunStats>;
  sync(): Promise<RunStats>;
  diff(): Promise<string[]>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  sim?: SimulatorOptions;
  pageSize?: number;
  lookbackSeconds?: number;
  concurrency?: number;
  hooks?: SyncHooks;
  /** Default: a SQLite file in a temp dir. */
  dialect?: Dialect;
  /** Default: WSMIRROR_TEST_DRAIN_PLAN, else "auto" (npm test runs the scenario suites once per forced plan too). */
  drainPlan?: DrainPlanSetting;
}

/**
 * The drain plan the scenario suites run under: `npm test` runs them once as configured ("auto")
 * and once more each with the list plan forced on and off (vitest.scenarios.config.ts).
 */
export function testDrainPlan(): DrainPlanSetting {
  const v = process.env.WSMIRROR_TEST_DRAIN_PLAN;
  if (v === undefined || v === '') return 'auto';
  if (v === 'auto' || v === 'list' || v === 'record') return v;
  throw new Error(`WSMIRROR_TEST_DRAIN_PLAN must be auto, list or record, got ${JSON.stringify(v)}`);
}

/** One call to the simulator's public API as a user would make it (JSON in and out); throws on a status of 300 or more. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the simulator's JSON answer, read by each test as the wire body it checks
export async function callApi(sim: Simulator, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${sim.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json: unknown = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** A simulator, a fresh SQLite mirror and a sync context wired to both, over real HTTP. */
export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const sim = await startSimulator({ seed: 7, tickets: 40, deals: 15, control: true, apiKeys: { [API_KEY]: '' }, ...options.sim });
  const { dir, cleanup } = tempDir();
  const target = options.dialect
    ? await options.dialect.newDatabase()
    : { database: join(dir, 'mirror.sqlite'), drop: () => Promise.resolve() };
  const database = target.database;
  const store = await openStore({ database });
  await store.migrate();
  const client = createApiClient({
    baseUrl: sim.url,
    apiKey: API_KEY,
    maxRequestsPerSecond: 5000,
    concurrency: options.concurrency ?? 8,
    retry: { maxAttempts: 8, minDelayMs: 1, maxDelayMs: 20 },
    requestTimeoutMs: 5000,
  });
  const ctx: SyncContext = {
    store,
    client,
    logger: silentLogger(),
    config: {
      lookbackSeconds: options.lookbackSeconds ?? 300,
      pageSize: options.pageSize ?? 100,
      concurrency: options.concurrency ?? 8,
      drainPlan: options.drainPlan ?? testDrainPlan(),
    },
    stopSignal: new AbortController().signal,
    now: () => new Date().toISOString(),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  };
  return {
    sim,
    store,
    client,
    ctx,
    database,
    dir,
    backfill: async () => (await recordRun(ctx, 'backfill', (s) => runBackfill(ctx, s))).stats,
    sync: async () => {
      const stats = emptyStats();
      await runSyncCycle(ctx, stats);
      return stats;
    },
    diff: () => diffMirror(databaseOf(store), sim.control.truth()),
    close: async () => {
      await client.close();
      await store.close();
      await sim.close();
      await target.drop();
      cleanup();
    },
  };
}
