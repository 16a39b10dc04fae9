import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFleet } from '../../src/fleet/config.js';
import { applyFleet, openFleetPool } from '../../src/fleet/db.js';
import { runSlice, type SliceEnv } from '../../src/fleet/slice.js';
import { createLogger } from '../../src/log/index.js';
import { startSimulator, type MultiSimulator } from '../../src/simulator/index.js';
import { openSharedPostgres, type SharedPostgres } from '../../src/store/index.js';
import { SecretRedactor } from '../../src/util/redact.js';
import { postgresDialect } from '../helpers/dialects.js';
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
  let env: SliceEnv;
  let drop: () => Promise<void>;
  const tmp = tempDir('wsmirror-slice-');

  beforeAll(async () => {
    sim = await startSimulator({ workspaces: [{ id: 'acme' }], tickets: 6, deals: 2 });
    const target = await postgresDialect!.newDatabase();
    drop = target.drop;
    const ws = sim.workspace('acme');
    const keyFile = join(tmp.dir, 'acme.key');
    writeFileSync(keyFile, `${ws.apiKey}\n`);
    // One attempt per request: the first 429 or 503 fails the slice, with no wait inside it.
    const fleet = parseFleet({
      database: target.database,
      workspaces: [{ id: 'acme', baseUrl: ws.baseUrl, apiKeyFile: keyFile, schedule: 'continuous', retry: { maxAttempts: 1 } }],
    });
    pool = openFleetPool(target.database, 2);
    shared = await openSharedPostgres(target.database, 3);
    await applyFleet(pool, fleet.workspaces);
    const redactor = new SecretRedactor();
    env = {
      pool,
      shared,
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
});
