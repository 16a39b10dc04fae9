import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import type { Dialect } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { forwardTo } from '../helpers/forward.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';

/**
 * Environment for a spawned CLI against a local simulator: a config file with fast retries and a
 * high request ceiling (loopback), the key and address from the environment as a user would.
 */
export function cliConfig(
  dir: string,
  opts: { url: string; apiKey?: string; database?: string; extra?: Record<string, unknown> },
): Record<string, string> {
  const configPath = join(dir, 'wsmirror.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      maxRequestsPerSecond: 2000,
      concurrency: 8,
      requestTimeoutMs: 5000,
      retry: { maxAttempts: 4, maxDelayMs: 50 },
      http: { port: 0 },
      schedule: '* * * * * *',
      // The default nightly reconcile (03:00) would list every ticket and deal in the middle of a
      // test that runs then, beside the requests it counts: February 30th never comes.
      reconcileSchedule: '0 0 0 30 2 *',
      ...opts.extra,
    }),
  );
  return {
    WSMIRROR_CONFIG: configPath,
    WSMIRROR_BASE_URL: opts.url,
    WSMIRROR_API_KEY: opts.apiKey ?? 'test-key',
    WSMIRROR_DATABASE: opts.database ?? join(dir, 'mirror.sqlite'),
  };
}

/**
 * A simulator with the control surface for one describe block: started before its tests, closed
 * after. The returned object forwards to it, so tests read `sim.url` and `sim.control` directly.
 */
export function useSimulator(options: SimulatorOptions): Simulator {
  let started: Simulator | null = null;
  beforeAll(async () => {
    started = await startSimulator({ control: true, apiKeys: { 'test-key': '' }, ...options });
  });
  afterAll(async () => started?.close());
  return forwardTo(() => {
    if (!started) throw new Error('the simulator starts in beforeAll; use it inside a test');
    return started;
  });
}

/** A mirror of `sim` on a fresh database of `dialect`, backfilled and synced by the CLI, for one describe block. */
export interface BackfilledMirror {
  /** The spawned CLI's environment (cliConfig). */
  readonly env: Record<string, string>;
  /** The SQLite path or postgres:// URL. */
  readonly database: string;
}

/** Creates the mirror in beforeAll (backfill, then sync) and drops it in afterAll; read its fields inside a test. */
export function useBackfilledMirror(dialect: Dialect, sim: Simulator, extra?: Record<string, unknown>): BackfilledMirror {
  const state: { env?: Record<string, string>; database?: string; done?: () => Promise<void> } = {};
  beforeAll(async () => {
    const { dir, cleanup } = tempDir();
    const target = await dialect.newDatabase();
    state.database = target.database;
    state.done = async () => {
      await target.drop();
      cleanup();
    };
    state.env = cliConfig(dir, { url: sim.url, database: target.database, ...(extra ? { extra } : {}) });
    for (const args of [['backfill'], ['sync']]) {
      const r = await runCli(args, state.env);
      expect(r.code, r.stderr).toBe(0);
    }
  }, 60_000);
  afterAll(async () => state.done?.());
  return {
    get env() {
      return state.env!;
    },
    get database() {
      return state.database!;
    },
  };
}
