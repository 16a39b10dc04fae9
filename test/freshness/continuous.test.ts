import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RequestLogEntry, type Simulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/index.js';
import { spawnCli, waitForOutput } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig } from '../cli/env.js';
import { claimMisses } from './as-of-oracle.js';
import { databaseOf } from '../../src/store/internal.js';

const TOKEN = 'continuous-test-token-1234';
/** The daemon's ceiling here; its idle polls may take a fifth of it (src/daemon/continuous.ts, IDLE_SHARE). */
const RATE = 50;
const IDLE_BUDGET = 0.2 * RATE;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves once the simulator has seen `n` requests since `from` (an index into its log). */
async function requestsSeen(sim: Simulator, from: number, n: number): Promise<RequestLogEntry[]> {
  for (;;) {
    const seen = sim.control.requests().slice(from);
    if (seen.length >= n) return seen.slice(0, n);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Requests beyond what the idle share allows over the span they were made in: the first cycle's
 * requests come before any spacing, so they are not counted against the span (at most `perCycle`).
 */
function overBudget(seen: RequestLogEntry[], perCycle: number): number {
  const spanS = (Date.parse(seen[seen.length - 1]!.startedAt) - Date.parse(seen[0]!.startedAt)) / 1000;
  return seen.length - perCycle - IDLE_BUDGET * spanS;
}

/**
 * `run` with `schedule: "continuous"` as a user runs it (the real CLI, real HTTP): read-after-write
 * through GET /wait, idle polls within their share of the ceiling, also under 429s and 503s, and a stop within the 10 s grace. The simulated clock moves only by the test's steps
 * (realTime: false), so the as-of, which rests on the upstream's Date, moves only when the test
 * lets it, and a write is found by cycles that the test waits for by their effect.
 */
for (const dialect of dialects)
  describe(`wsmirror run, schedule "continuous" (${dialect.name})`, () => {
    const cleanups: (() => Promise<void> | void)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    it('answers /wait for a write, keeps idle polls within budget, also under 429s and 503s, and stops on SIGTERM', async () => {
      const sim = await startSimulator({ seed: 41, tickets: 20, deals: 8, control: true, apiKeys: { 'test-key': '' }, realTime: false });
      cleanups.push(() => sim.close());
      const { dir, cleanup } = tempDir();
      cleanups.push(cleanup);
      const target =
        dialect.name === 'sqlite' ? { database: join(dir, 'mirror.sqlite'), drop: () => Promise.resolve() } : await dialect.newDatabase();
      cleanups.push(target.drop);
      const port = await freePort();
      const env = {
        ...cliConfig(dir, {
          url: sim.url,
          database: target.database,
          extra: { schedule: 'continuous', minPollIntervalMs: 100, maxRequestsPerSecond: RATE, http: { port } },
        }),
        WSMIRROR_LOG_LEVEL: 'info',
        WSMIRROR_HTTP_AUTH_TOKEN: TOKEN,
      };
      const daemon = spawnCli(['run'], env);
      cleanups.push(() => void daemon.kill('SIGKILL'));
      const wait = async (query: string) => {
        const res = await fetch(`http://127.0.0.1:${port}/wait${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        return { status: res.status, body: (await res.json()) as { currentAsOf: string | null; status?: string } };
      };
      await waitForOutput(daemon, /"msg":"sync cycle"/);

      // Already current: at once. Ahead of anything the mirror can know: 504 with the as-of.
      const start = sim.control.now();
      expect(await wait(`?until=${new Date(start.getTime() - 5000).toISOString()}`)).toMatchObject({ status: 200 });
      expect(await wait(`?until=${new Date(start.getTime() + 60_000).toISOString()}&timeoutMs=50`)).toMatchObject({
        status: 504,
        body: { status: 'timeout', currentAsOf: expect.any(String) },
      });
      expect((await wait('?until=soon')).status).toBe(400);

      // A write, then a wait for its instant: answered by the commit after the clock moves on.
      sim.control.act(3);
      const written = sim.control.now().toISOString();
      const pending = wait(`?until=${written}&timeoutMs=120000`);
      sim.control.advanceClock(2500);
      const answered = await pending;
      expect(answered).toMatchObject({ status: 200, body: { status: 'current' } });
      expect(Date.parse(answered.body.currentAsOf!)).toBeGreaterThanOrEqual(Date.parse(written));
      const reader = await openStore({ database: target.database, readonly: true });
      try {
        expect(await claimMisses(reader, sim.control.truth(), answered.body.currentAsOf!)).toEqual([]);
      } finally {
        await reader.close();
      }

      // Idle: two requests a poll (pipelines, then the change log), within the idle share.
      const idle = await requestsSeen(sim, sim.control.requests().length, 16);
      expect(new Set(idle.map((r) => r.path))).toEqual(new Set(['/api/v1/pipelines', '/api/v1/events']));
      expect(overBudget(idle, 2)).toBeLessThanOrEqual(0.5);
      // Those idle polls fold into one sync_runs row (docs/schema.md, sync_runs), not a row each.
      const runs = await openStore({ database: target.database, readonly: true });
      try {
        const folded = await databaseOf(runs)
          .selectFrom('sync_runs')
          .select((eb) => eb.fn.max('cycles').as('most'))
          .executeTakeFirstOrThrow();
        expect(Number(folded.most)).toBeGreaterThanOrEqual(5);
      } finally {
        await runs.close();
      }

      // 429s and 503s at random: the retries count against the share too.
      sim.control.setFaults({ rateLimitRate: 0.2, errorRate: 0.2, retryAfterSeconds: 0 });
      const faulty = await requestsSeen(sim, sim.control.requests().length, 24);
      expect(faulty.some((r) => r.status === 429 || r.status >= 500)).toBe(true);
      // A cycle's own retries (up to retry.maxAttempts per request) come before its pause.
      expect(overBudget(faulty, 8)).toBeLessThanOrEqual(0.5);
      sim.control.clearFaults();

      const stopAt = performance.now();
      daemon.kill('SIGTERM');
      const r = await daemon.result;
      // Exit 0 is the bound itself: past its 10 s grace the daemon aborts with exit 1.
      expect(r.code).toBe(0);
      expect(performance.now() - stopAt).toBeLessThan(10_000);
      expect(r.stderr).not.toContain(TOKEN);
    }, 120_000);
  });
