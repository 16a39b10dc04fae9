import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFleet } from '../../src/fleet/config.js';
import { applyFleet, openFleetPool } from '../../src/fleet/db.js';
import { runSlice, type SliceEnv } from '../../src/fleet/slice.js';
import { createLogger } from '../../src/log/index.js';
import { startSimulator, type MultiSimulator } from '../../src/simulator/index.js';
import { openSharedPostgres, openStore, type SharedPostgres } from '../../src/store/index.js';
import { SecretRedactor } from '../../src/util/redact.js';
import { databaseOf } from '../../src/store/internal.js';
import { diffMirror } from '../helpers/truth.js';
import { postgresDialect } from '../helpers/dialects.js';
import { Agent } from 'undici';
import { tempDir } from '../helpers/tmp.js';

/**
 * When the next slice of a workspace runs after a failure: the upstream's Retry-After, when it
 * asked for longer than the back-off, outlasts the slice that heard it (issue 48: "the next is
 * enqueued per the workspace's schedule ... or the upstream's Retry-After"). Slices run in this
 * process against the simulator over loopback and the real PostgreSQL.
 */
describe.skipIf(postgresDialect === null)('the next slice after an upstream that asked to wait (PostgreSQL only: a fleet needs it)', () => {
  let sim: MultiSimulator;
  let pool: pg.Pool;
  let shared: SharedPostgres;
  const agent = new Agent();
  let env: SliceEnv;
  let drop: () => Promise<void>;
  const tmp = tempDir('wsmirror-slice-');

  beforeAll(async () => {
    sim = await startSimulator({ workspaces: [{ id: 'acme' }, { id: 'beta' }], tickets: 6, deals: 2 });
    const target = await postgresDialect!.newDatabase();
    drop = target.drop;
    const keyFile = (id: string) => {
      const file = join(tmp.dir, `${id}.key`);
      writeFileSync(file, `${sim.workspace(id).apiKey}\n`);
      return file;
    };
    // One attempt per request: the first 429 or 503 fails the slice, with no wait inside it.
    const fleet = parseFleet({
      database: target.database,
      workspaces: [
        {
          id: 'acme',
          baseUrl: sim.workspace('acme').baseUrl,
          apiKeyFile: keyFile('acme'),
          schedule: 'continuous',
          retry: { maxAttempts: 1 },
        },
        { id: 'beta', baseUrl: sim.workspace('beta').baseUrl, apiKeyFile: keyFile('beta'), schedule: 'continuous' },
      ],
    });
    pool = openFleetPool(target.database, 2);
    shared = await openSharedPostgres(target.database, 3);
    await applyFleet(pool, fleet.workspaces);
    const redactor = new SecretRedactor();
    env = {
      pool,
      shared,
      agent,
      database: target.database,
      logger: createLogger({ level: 'silent', redactor }),
      logLevel: 'silent',
      redactor,
      sliceSeconds: 30,
      stop: new AbortController().signal,
      workerId: 'test',
    };
  });

  afterAll(async () => {
    await agent.close();
    await shared?.end();
    await pool?.end();
    await sim?.close();
    await drop?.();
    tmp.cleanup();
  });

  it('waits out a Retry-After longer than its back-off, and backs off as usual without one', async () => {
    // From an empty mirror: slices until the backfill is done and a sync succeeded.
    let report = await runSlice(env, 'acme');
    for (let i = 0; i < 20 && (report.kind !== 'sync' || !report.ok); i++) report = await runSlice(env, 'acme');
    expect(report).toMatchObject({ kind: 'sync', ok: true });

    const control = sim.workspace('acme').control;
    control.failNext({ status: 429, count: 1, retryAfter: '90' });
    const limited = await runSlice(env, 'acme');
    expect(limited.ok).toBe(false);
    // The back-off after a first failure is 5 s; the upstream asked for 90.
    expect(limited.next!.delayMs).toBeGreaterThan(85_000);
    expect(limited.next!.delayMs).toBeLessThanOrEqual(90_000);
    const row = await pool.query<{ wait: number; code: string }>(
      `select extract(epoch from next_at - now())::float8 as wait, last_error_code as code from wsmirror_fleet.workspaces where id = 'acme'`,
    );
    expect(row.rows[0]!.code).toBe('RATE_LIMITED');
    expect(row.rows[0]!.wait).toBeGreaterThan(80);

    control.failNext({ status: 503, count: 1 });
    const unavailable = await runSlice(env, 'acme');
    expect(unavailable.ok).toBe(false);
    expect(unavailable.next!.delayMs).toBeLessThanOrEqual(20_000);
  });

  it('runs the nightly reconcile as a slice when its tick has passed, repairs what drifted, then syncs', async () => {
    let report = await runSlice(env, 'beta');
    for (let i = 0; i < 20 && (report.kind !== 'sync' || !report.ok); i++) report = await runSlice(env, 'beta');
    expect(report).toMatchObject({ kind: 'sync', ok: true });
    // The mirror drifts behind the engine's back; the default reconcileSchedule (03:00) last ticked
    // since the workspace was added two days ago.
    await pool.query(`update beta.tickets set subject = 'tampered' where id = (select min(id) from beta.tickets)`);
    await pool.query(
      `update wsmirror_fleet.workspaces set added_at = now() - interval '2 days', last_reconcile_at = null where id = 'beta'`,
    );
    const store = await openStore({ database: env.database, schema: 'beta', readonly: true });
    try {
      const truth = sim.workspace('beta').control.truth();
      expect(await diffMirror(databaseOf(store), truth)).not.toEqual([]);
      const reconciled = await runSlice(env, 'beta');
      expect(reconciled).toMatchObject({ kind: 'reconcile', ok: true, next: { delayMs: 0 } });
      expect(await diffMirror(databaseOf(store), truth)).toEqual([]);
    } finally {
      await store.close();
    }
    // Its tick is spent: the next slice syncs.
    expect(await runSlice(env, 'beta')).toMatchObject({ kind: 'sync', ok: true });
  });
});
