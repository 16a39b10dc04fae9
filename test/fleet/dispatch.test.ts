import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgBoss } from 'pg-boss';
import { SliceDispatcher } from '../../src/fleet/dispatch.js';
import { enqueueSlice, SLICE_QUEUE, startQueue } from '../../src/fleet/queue.js';
import { QUEUE_SCHEMA } from '../../src/fleet/config.js';
import { postgresDialect } from '../helpers/dialects.js';

/**
 * The worker's slots over pg-boss's own primitives (src/fleet/dispatch.ts), on a real queue: every
 * job runs once, its successor is queued and it is completed, in fewer fetches, inserts and
 * completes than slices; a slice that throws fails its job, which pg-boss retries; a stop lets the
 * slices in flight end and settles them.
 */
describe.skipIf(postgresDialect === null)('the slice dispatcher on a pg-boss queue', () => {
  let drop: () => Promise<void>;
  let pool: pg.Pool;
  let boss: PgBoss;
  const calls = { fetch: 0, insert: 0, complete: 0, fail: 0 };

  beforeAll(async () => {
    const target = await postgresDialect!.newDatabase();
    drop = target.drop;
    pool = new pg.Pool({ connectionString: target.database, max: 2 });
    pool.on('error', () => undefined);
    boss = await startQueue(target.database, { supervise: false, onError: () => undefined });
    // Counted, not replaced: every call still goes to the real queue.
    for (const name of Object.keys(calls) as (keyof typeof calls)[]) {
      const real = (boss[name] as (...a: unknown[]) => Promise<unknown>).bind(boss);
      (boss as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => (calls[name]++, real(...a));
    }
  });

  afterAll(async () => {
    await boss?.stop({ graceful: false, timeout: 5000 }).catch(() => undefined);
    await pool?.end();
    await drop?.();
  });

  const states = async () =>
    (
      await pool.query<{ key: string; state: string; n: number }>(
        `select singleton_key as key, state, count(*)::int as n from ${QUEUE_SCHEMA}.job where name = $1 group by 1, 2 order by 1, 2`,
        [SLICE_QUEUE],
      )
    ).rows
      .map((r) => `${r.key}:${r.state}:${r.n}`)
      .sort();

  it('runs each ready slice once, queues its successor and completes it, sharing the statements between slices', async () => {
    const ids = Array.from({ length: 24 }, (_, i) => `ws${String(i).padStart(2, '0')}`);
    for (const id of ids) await enqueueSlice(boss, id, 0);
    const ran: string[] = [];
    const stop = new AbortController();
    const errors: string[] = [];
    let inFlight = 0;
    let most = 0;
    const dispatcher = new SliceDispatcher(boss, {
      concurrency: 8,
      stop: stop.signal,
      onError: (err) => errors.push(err.message),
      run: async ({ id }) => {
        most = Math.max(most, ++inFlight);
        ran.push(id);
        await new Promise((r) => setTimeout(r, 40));
        inFlight--;
        if (ran.length === ids.length) stop.abort();
        // Successors far in the future: only the first slice of each workspace runs here.
        return { delayMs: 3_600_000 };
      },
    });
    await dispatcher.run();
    expect([...ran].sort()).toEqual(ids);
    expect(errors).toEqual([]);
    expect(most).toBeLessThanOrEqual(8);
    // Each workspace: its slice completed, its successor queued (stately keeps one).
    expect(await states()).toEqual(ids.flatMap((id) => [`${id}:completed:1`, `${id}:created:1`]));
    expect(calls.fetch).toBeLessThan(ids.length);
    expect(calls.insert).toBeLessThan(ids.length);
    expect(calls.complete).toBeLessThan(ids.length);
  });

  it('fails the job of a slice that threw, and the retry runs it again', async () => {
    await pool.query(`delete from ${QUEUE_SCHEMA}.job where name = $1`, [SLICE_QUEUE]);
    await enqueueSlice(boss, 'flaky', 0);
    const attempts: string[] = [];
    const stop = new AbortController();
    const errors: string[] = [];
    const dispatcher = new SliceDispatcher(boss, {
      concurrency: 2,
      stop: stop.signal,
      onError: (err) => errors.push(err.message),
      run: ({ id }) => {
        attempts.push(id);
        if (attempts.length === 1) return Promise.reject(new Error('the fleet database went away'));
        stop.abort();
        return Promise.resolve(null);
      },
    });
    await dispatcher.run();
    expect(attempts).toEqual(['flaky', 'flaky']);
    expect(errors).toEqual(['the fleet database went away']);
    // Completed on its second attempt; no successor (the slice asked for none).
    const { rows } = await pool.query<{ state: string; retry_count: number }>(
      `select state, retry_count from ${QUEUE_SCHEMA}.job where name = $1`,
      [SLICE_QUEUE],
    );
    expect(rows).toEqual([{ state: 'completed', retry_count: 1 }]);
  });
});
