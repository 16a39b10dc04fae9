import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SIMULATOR_DIALECTS, startSimulator, type Simulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { postgresDialect } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { diffMirror } from '../helpers/truth.js';

/**
 * The fleet as users run it: real worker processes (the spawned CLI) on the local PostgreSQL, one
 * simulator per workspace, each under its own dialect. Every wait is on observable progress: a
 * request a simulator saw, a row of the fleet table, a job of the queue.
 */

interface Space {
  id: string;
  sim: Simulator;
  key: string;
  requests: number;
  entry: Record<string, unknown>;
}

type Worker = ReturnType<typeof spawnCli> & { log: () => string };

const DIALECTS = Object.keys(SIMULATOR_DIALECTS);
/** What a timed-out wait prints: the fleet table, the queue and the workers' last lines. */
let diagnose: (() => Promise<void>) | null = null;

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 90_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() > until) {
      await diagnose?.();
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function makeSpace(id: string, i: number, dir: string, over: Record<string, unknown> = {}, tickets = 40): Promise<Space> {
  const key = `key-${randomBytes(16).toString('hex')}`;
  const dialect = DIALECTS[i % DIALECTS.length]!;
  const sim = await startSimulator({
    control: true,
    apiKeys: { [key]: '' },
    seed: 100 + i,
    tickets,
    deals: 15,
    dialect: { ...SIMULATOR_DIALECTS[dialect] },
  });
  const keyFile = join(dir, `${id}.key`);
  writeFileSync(keyFile, `${key}\n`);
  const space: Space = { id, sim, key, requests: 0, entry: {} };
  sim.control.onRequest(() => space.requests++);
  const keySource = i % 4 === 1 ? { apiKeyEnv: `KEY_${id.toUpperCase()}` } : { apiKeyFile: keyFile };
  space.entry = { id, baseUrl: sim.url, ...keySource, ...(i % 2 === 0 ? { schedule: '*/2 * * * * *' } : {}), ...over };
  return space;
}

function writeFleet(path: string, database: string, spaces: Space[]): void {
  const fleet = {
    database,
    defaults: {
      maxRequestsPerSecond: 200,
      requestTimeoutMs: 5000,
      retry: { maxAttempts: 3, maxDelayMs: 100 },
      pageSize: 25,
      schedule: 'continuous',
      minPollIntervalMs: 1000,
    },
    worker: { concurrency: 3, sliceSeconds: 4, http: { port: 0 }, logLevel: 'info' },
    workspaces: spaces.map((s) => s.entry),
  };
  writeFileSync(path, JSON.stringify(fleet, null, 2));
}

describe.skipIf(!postgresDialect)('fleet: workers on a PostgreSQL job queue (spawned CLI, PostgreSQL)', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('mirrors a dozen workspaces exactly through worker kills, pause, resume, add, remove and a revoked key', async () => {
    const { dir, cleanup } = tempDir('wsmirror-fleet-');
    cleanups.push(cleanup);
    const { database, drop } = await postgresDialect!.newDatabase();
    cleanups.push(drop);
    const pool = new pg.Pool({ connectionString: database, max: 2 });
    cleanups.push(() => pool.end());

    const spaces: Space[] = [];
    for (let i = 0; i < 10; i++) spaces.push(await makeSpace(`ws${i}`, i, dir, i === 1 ? { maxRequestsPerSecond: 40 } : {}));
    const big = await makeSpace('big', 10, dir, { maxRequestsPerSecond: 40, pageSize: 10 }, 500);
    const revoked = await makeSpace('revoked', 11, dir);
    revoked.entry = { ...revoked.entry, apiKeyFile: join(dir, 'revoked.bad'), apiKeyEnv: undefined };
    writeFileSync(join(dir, 'revoked.bad'), 'key-that-was-revoked-0123456789\n');
    spaces.push(big, revoked);
    for (const s of spaces) cleanups.push(() => s.sim.close());
    const fleetPath = join(dir, 'fleet.json');
    writeFleet(fleetPath, database, spaces);
    const env: Record<string, string> = Object.fromEntries(
      spaces.filter((s) => 'apiKeyEnv' in s.entry && s.entry.apiKeyEnv).map((s) => [s.entry.apiKeyEnv as string, s.key]),
    );

    const applied = await runCli(['fleet', 'apply', '--config', fleetPath], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout).added).toHaveLength(12);

    const workers: Worker[] = [];
    let port = 0;
    const startWorker = () => {
      port = 20000 + Math.floor(Math.random() * 20000);
      const child = spawnCli(['fleet', 'worker', '--config', fleetPath, '--http-port', String(port)], env);
      let log = '';
      child.stderr.on('data', (d: Buffer) => (log += d.toString()));
      child.stdout.on('data', (d: Buffer) => (log += d.toString()));
      const w = Object.assign(child, { log: () => log });
      workers.push(w);
      cleanups.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
      return w;
    };
    const row = async (id: string) =>
      (await pool.query<Record<string, unknown>>('select * from wsmirror_fleet.workspaces where id = $1', [id])).rows[0];
    /** SIGKILLs the worker that began the workspace's newest slice; the time of the kill. */
    const killWorkerOf = async (id: string): Promise<{ at: number; requests: number }> => {
      const workerId = String((await row(id))!.worker_id);
      const victim = workers.find((w) => workerId.includes(`-${w.pid}-`))!;
      victim.kill('SIGKILL');
      return { at: Date.now(), requests: spaces.find((s) => s.id === id)!.requests };
    };
    diagnose = async () => {
      const rows = await pool.query(
        'select id, state, backfill_phase, last_error_code, last_error, consecutive_failures, next_at, worker_id from wsmirror_fleet.workspaces',
      );
      const jobs = await pool.query(
        `select singleton_key, state, retry_count, start_after from wsmirror_queue.job where name = 'wsmirror-slice' and state <> 'completed'`,
      );
      console.error(JSON.stringify({ rows: rows.rows, jobs: jobs.rows, logs: workers.map((w) => w.log().slice(-3000)) }, null, 1));
    };
    startWorker();
    startWorker();
    // The spawned worker turns ready (the Kubernetes readiness probe) once it reconciled and joined the queue.
    const readyPort = port;
    await waitFor('the second worker ready', async () => {
      const res = await fetch(`http://127.0.0.1:${readyPort}/readyz`).catch(() => null);
      return res?.status === 200 && workers[1]!.log().includes('fleet worker started');
    });

    // 1. A worker SIGKILLed mid-backfill, keyed to the backfill's progress: another re-runs its slice.
    await waitFor('big mid-backfill', async () => big.requests >= 60 && (await row('big'))?.backfill_phase !== 'done');
    const k1 = await killWorkerOf('big');
    const replacement = startWorker();
    await waitFor('big resumed', () => Promise.resolve(big.requests > k1.requests), 60_000);
    const redelivered = (Date.now() - k1.at) / 1000;
    expect(redelivered).toBeLessThanOrEqual(30);

    // 2. Every workspace backfilled and current; the revoked key shows on its own line, not retried hot.
    const healthy = spaces.filter((s) => s !== revoked);
    await waitFor(
      'all current',
      async () => {
        for (const s of healthy)
          if ((await row(s.id))?.last_success_at == null || (await row(s.id))?.backfill_phase !== 'done') return false;
        return true;
      },
      180_000,
    );
    const rev = await row('revoked');
    expect(rev?.state).toBe('key_rejected');
    expect(rev?.last_error_code).toBe('AUTH_REJECTED');
    expect(revoked.requests).toBeLessThanOrEqual(2);

    // 3. A worker SIGKILLed mid-sync, keyed to the sync's requests.
    const ws1 = spaces[1]!;
    const beforeSync = ws1.requests;
    ws1.sim.control.act(120);
    await waitFor('ws1 mid-sync', () => Promise.resolve(ws1.requests >= beforeSync + 12));
    await killWorkerOf('ws1');
    // Joined before the file changes below, so the `fleet apply` there is what reconciles them.
    const restarted = startWorker();
    await waitFor('the restarted workers joined', () =>
      Promise.resolve([replacement, restarted].every((w) => w.log().includes('fleet file reconciled'))),
    );

    // 4. Pause, add and remove while the workers run.
    const ws3 = spaces[3]!;
    expect((await runCli(['fleet', 'pause', 'ws3', '--config', fleetPath], env)).code).toBe(0);
    await waitFor('ws3 idle', async () => {
      const { rows } = await pool.query(
        `select 1 from wsmirror_queue.job where name = 'wsmirror-slice' and singleton_key = 'ws3' and state = 'active'`,
      );
      return rows.length === 0;
    });
    const pausedAt = ws3.requests;
    ws3.sim.control.act(10);
    const late = await makeSpace('late', 12, dir);
    cleanups.push(() => late.sim.close());
    const ws4 = spaces[4]!;
    const declared = [...spaces.filter((s) => s !== ws4), late];
    writeFleet(fleetPath, database, declared);
    const reapplied = await runCli(['fleet', 'apply', '--config', fleetPath], env);
    expect(JSON.parse(reapplied.stdout)).toMatchObject({ added: ['late'], removed: ['ws4'] });
    await waitFor('late current', async () => (await row('late'))?.backfill_phase === 'done', 120_000);
    // Progress elsewhere, not time: ws0 completes slices while ws3 stays paused.
    const ws0Slices = async () =>
      Number((await pool.query(`select count(*) from wsmirror_fleet.slices where workspace_id = 'ws0' and ok`)).rows[0].count);
    const mark = await ws0Slices();
    await waitFor('ws0 progress', async () => (await ws0Slices()) >= mark + 6);
    expect(ws3.requests).toBe(pausedAt);
    expect((await runCli(['fleet', 'resume', 'ws3', '--config', fleetPath], env)).code).toBe(0);

    // 5. After the last writes, every declared workspace's mirror equals its truth.
    for (const s of declared) if (s !== revoked) s.sim.control.act(8);
    const settled = new Date();
    for (const s of declared.filter((x) => x !== revoked)) {
      await waitFor(
        `${s.id} synced after the last writes`,
        async () => {
          const r = await row(s.id);
          return r && r.last_success_at instanceof Date && r.last_success_at > settled && (r.state === 'current' || r.state === 'behind');
        },
        120_000,
      );
      await waitFor(
        `${s.id} equals its truth`,
        async () => {
          const store = await openStore({ database, readonly: true, schema: s.id });
          try {
            return (await diffMirror(databaseOf(store), s.sim.control.truth())).length === 0;
          } finally {
            await store.close();
          }
        },
        30_000,
      ).catch(async () => {
        const store = await openStore({ database, readonly: true, schema: s.id });
        expect(await diffMirror(databaseOf(store), s.sim.control.truth()), s.id).toEqual([]);
      });
    }

    // 6. The views equal the union of the schemas; the removed workspace left them, its data stayed.
    // A schema created since the last rebuild joins at a worker's next supervision pass (≤ 10 s).
    await waitFor(
      'the views rebuilt after the last schema change',
      async () =>
        (await pool.query<{ n: number }>(`select count(*)::int as n from wsmirror_fleet.views_state where wanted = built`)).rows[0]!.n ===
        1,
      30_000,
    );
    const views = (
      await pool.query<{ table_name: string }>(`select table_name from information_schema.views where table_schema = 'wsmirror_all'`)
    ).rows.map((r) => r.table_name);
    expect(views).toEqual(expect.arrayContaining(['tickets', 'deals', 'ticket_messages', 'rpt_tickets', 'rpt_deals']));
    const inViews = declared.filter((s) => s !== revoked).map((s) => s.id);
    for (const v of views) {
      const ids = (await pool.query(`select distinct workspace_id from wsmirror_all."${v}"`)).rows.map(
        (r: { workspace_id: string }) => r.workspace_id,
      );
      expect(
        ids.every((id: string) => inViews.includes(id) || id === 'revoked'),
        v,
      ).toBe(true);
      for (const id of inViews) {
        // Compared on the workspace's own columns, as text: a view also has the columns other
        // workspaces' tables have (their custom fields), NULL here, and text where types differ.
        const own = (
          await pool.query<{ column_name: string }>(
            `select column_name from information_schema.columns where table_schema = $1 and table_name = $2 order by ordinal_position`,
            [id, v],
          )
        ).rows.map((r) => `"${r.column_name}"::text`);
        if (own.length === 0) continue;
        const list = own.join(', ');
        const { rows } = await pool.query(
          `select (select count(*) from ((select workspace_id, ${list} from wsmirror_all."${v}" where workspace_id = $1) except all (select $1::text, ${list} from "${id}"."${v}")) a)
                + (select count(*) from ((select $1::text, ${list} from "${id}"."${v}") except all (select workspace_id, ${list} from wsmirror_all."${v}" where workspace_id = $1)) b) as n`,
          [id],
        );
        expect(Number(rows[0].n), `${v} of ${id}`).toBe(0);
      }
    }
    expect(Number((await pool.query(`select count(*) from ws4.tickets`)).rows[0].count)).toBeGreaterThan(0);
    const removed = await runCli(['fleet', 'remove', 'ws4', '--drop', '--config', fleetPath], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await pool.query(`select 1 from pg_namespace where nspname = 'ws4'`)).rows).toHaveLength(0);

    // 7. fleet status, the page, /metrics: every workspace on its own line; no key anywhere.
    const status = await runCli(['fleet', 'status', '--json', '--config', fleetPath], env);
    const json = JSON.parse(status.stdout) as { workspaces: Array<Record<string, unknown>> };
    expect(json.workspaces.map((w) => w.id).sort()).toEqual(declared.map((s) => s.id).sort());
    for (const w of json.workspaces)
      expect(Object.keys(w)).toEqual(expect.arrayContaining(['id', 'state', 'lagSeconds', 'currentAsOf', 'lastSuccessAt', 'lastError']));
    const alive = workers.filter((w) => w.exitCode === null && w.signalCode === null);
    // The newest worker's page (its port was picked at random: a clash would fail its start).
    expect(workers.at(-1)!.log()).toContain('fleet page listening');
    const pages = await Promise.all(
      ['/', '/fleet.json', '/metrics', '/workspaces/revoked', '/?sort=lag'].map(async (p) =>
        (await fetch(`http://127.0.0.1:${port}${p}`)).text(),
      ),
    );
    expect(pages[0]).toContain('key_rejected');
    expect(pages[2]).toMatch(/wsmirror_fleet_workspace_lag_seconds\{workspace="ws0"\}/);
    const tables = await pool.query<{ s: string; t: string }>(
      `select table_schema as s, table_name as t from information_schema.tables where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    let everything = pages.join('\n') + status.stdout + status.stderr;
    for (const t of tables.rows)
      everything += (await pool.query(`select coalesce(string_agg(x::text, E'\\n'), '') as d from "${t.s}"."${t.t}" x`)).rows[0].d;
    for (const w of alive) w.kill('SIGTERM');
    const exits = await Promise.all(alive.map((w) => w.result));
    for (const e of exits) expect(e.code, e.stderr.slice(-2000)).toBe(0);
    everything += workers.map((w) => w.log()).join('\n');
    for (const s of [...spaces, late]) expect(everything.includes(s.key), `${s.id}'s key leaked`).toBe(false);
    expect(everything.includes('key-that-was-revoked')).toBe(false);
  }, 600_000);
});
