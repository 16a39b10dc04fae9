import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/index.js';
import { spawnCli, waitForOutput } from '../helpers/cli.js';
import { postgresDialect } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { diffMirror } from '../helpers/truth.js';
import { cliConfig } from './env.js';
import { poll } from './ops-helpers.js';
import { databaseOf } from '../../src/store/internal.js';

type Proc = ReturnType<typeof spawnCli> & { log: () => string };

function start(env: Record<string, string>): Proc {
  const child = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  return Object.assign(child, { log: () => log });
}

const cycles = (p: Proc) => (p.log().match(/"msg":"sync cycle"/g) ?? []).length;

/** Waits for two more cycles than now: the second one began after this call. */
async function twoMoreCycles(p: Proc): Promise<void> {
  const n = cycles(p);
  await poll(() => Promise.resolve(cycles(p) >= n + 2), 90_000).catch((err: Error) => {
    throw new Error(`${err.message}; the process logged:\n${p.log().split('\n').slice(-8).join('\n')}`);
  });
}

/** The database URL with its own application_name, so a test can find one process's connections. */
function withAppName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

describe.skipIf(!postgresDialect)('several workspaces in one PostgreSQL database, one schema each', () => {
  it('two workspaces in two schemas stay isolated; each standby takes over after SIGKILL; a terminated connection recovers', async () => {
    const { database, drop } = await postgresDialect!.newDatabase();
    const dbName = new URL(database).pathname.slice(1);
    const dirs: Array<() => void> = [];
    const sims: Simulator[] = [];
    const procs: Proc[] = [];
    try {
      const workspaces = [] as { schema: string; sim: Simulator; env: (app: string) => Record<string, string> }[];
      for (const [schema, seed] of [
        ['ws_acme', 11],
        ['ws_globex', 12],
      ] as const) {
        const sim = await startSimulator({ seed, tickets: 30 + seed, deals: 6, control: true, apiKeys: { 'test-key': '' } });
        sims.push(sim);
        const own = tempDir();
        dirs.push(own.cleanup);
        workspaces.push({
          schema,
          sim,
          env: (app) => cliConfig(own.dir, { url: sim.url, database: withAppName(database, app), extra: { schema } }),
        });
      }
      const writers: Proc[] = [];
      const standbys: Proc[] = [];
      for (const ws of workspaces) {
        const writer = start(ws.env(`${ws.schema}_first`));
        procs.push(writer);
        await waitForOutput(writer, /"msg":"sync cycle"/, 30_000);
        const standby = start(ws.env(`${ws.schema}_second`));
        procs.push(standby);
        await waitForOutput(standby, /hot standby/);
        writers.push(writer);
        standbys.push(standby);
      }
      for (const ws of workspaces) ws.sim.control.act(8);
      for (const w of writers) await twoMoreCycles(w);

      // SIGKILL each writer: its standby takes over within a tick.
      for (const [i, w] of writers.entries()) {
        w.kill('SIGKILL');
        await w.result;
        await waitForOutput(standbys[i]!, /writer lock held/, 10_000);
        await twoMoreCycles(standbys[i]!);
      }

      // Terminate the new acme writer's query connection in the middle of a query (never the lock's
      // connection, never another test's): a table lock makes its next cycle's first write wait,
      // and the waiting backend is the one terminated.
      const admin = new pg.Client({ connectionString: database });
      await admin.connect();
      await admin.query('begin');
      await admin.query('lock table ws_acme.sync_runs in access exclusive mode');
      let waiting: number | null = null;
      await poll(async () => {
        const r = await admin.query<{ pid: number }>(
          `select pid from pg_stat_activity where datname = $1 and application_name = $2 and wait_event_type = 'Lock'`,
          [dbName, 'ws_acme_second'],
        );
        waiting = r.rows[0]?.pid ?? null;
        return waiting !== null;
      }, 60_000);
      const killed = await admin.query('select pg_terminate_backend($1) as ok', [waiting]);
      await admin.query('rollback');
      // And every idle one it keeps in its pool.
      const idle = await admin.query(
        `select pg_terminate_backend(pid) as ok from pg_stat_activity
          where datname = $1 and application_name = $2 and pid <> pg_backend_pid()
            and pid not in (select pid from pg_locks where locktype = 'advisory' and granted)`,
        [dbName, 'ws_acme_second'],
      );
      await admin.end();
      expect(killed.rows[0].ok).toBe(true);
      expect(idle.rowCount).toBeGreaterThanOrEqual(0);
      for (const ws of workspaces) ws.sim.control.act(5);
      for (const s of standbys) await twoMoreCycles(s);
      expect(standbys[0]!.exitCode).toBeNull();
      // Which query the lock catches depends on where the cycle stood when the lock was taken: the
      // cycle's own run row (the cycle fails), the run's health refresh, or the maintenance after it
      // (each logs and is retried). Any of them is the recovery this checks; the mirror comparison
      // below is what proves nothing was lost.
      expect(standbys[0]!.log()).toMatch(
        /sync failed; the next tick retries|refreshing rpt_sync_health after the run failed|mirror maintenance failed; the next cycle retries/,
      );

      for (const ws of workspaces) {
        const store = await openStore({ database, readonly: true, schema: ws.schema });
        expect(await diffMirror(databaseOf(store), ws.sim.control.truth()), ws.schema).toEqual([]);
        await store.close();
      }
      // Nothing leaked into the default schema: each mirror, and its migrations, live in its own.
      const pub = await openStore({ database, readonly: true });
      const leaked = await sql<{
        table_name: string;
      }>`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`.execute(databaseOf(pub));
      expect(leaked.rows).toEqual([]);
      await pub.close();
      for (const s of standbys) {
        s.kill('SIGTERM');
        expect((await s.result).code).toBe(0);
      }
    } finally {
      for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
      for (const s of sims) await s.close();
      await drop();
      for (const c of dirs) c();
    }
  }, 240_000);

  it("readers stay read-only and in the configured schema whatever the URL's options say", async () => {
    const { database, drop } = await postgresDialect!.newDatabase();
    try {
      const writer = await openStore({ database, schema: 'ws_readonly' });
      const lock = await writer.acquireWriterLock({ wait: false });
      await writer.migrate();
      await lock.release();
      await writer.close();
      const u = new URL(database);
      u.searchParams.set('options', '-c search_path=public -c default_transaction_read_only=off');
      const reader = await openStore({ database: u.toString(), readonly: true, schema: 'ws_readonly' });
      const path = await databaseOf(reader)
        .selectNoFrom((eb) => eb.fn<string>('current_schema', []).as('s'))
        .executeTakeFirstOrThrow();
      expect(path.s).toBe('ws_readonly');
      await expect(sql`create table probe (x int)`.execute(databaseOf(reader))).rejects.toThrow(/read-only transaction/);
      await reader.close();
    } finally {
      await drop();
    }
  });

  it('a writer whose lock connection is terminated stops at once (exit 1, one sentence) and its standby takes over', async () => {
    const { database, drop } = await postgresDialect!.newDatabase();
    const dbName = new URL(database).pathname.slice(1);
    const { dir, cleanup } = tempDir();
    const sim = await startSimulator({ seed: 14, tickets: 20, deals: 4, control: true, apiKeys: { 'test-key': '' } });
    const env = cliConfig(dir, { url: sim.url, database, extra: { schema: 'ws_lost' } });
    const writer = start(env);
    let standby: Proc | null = null;
    try {
      await waitForOutput(writer, /"msg":"sync cycle"/, 30_000);
      standby = start(env);
      await waitForOutput(standby, /hot standby/);
      const admin = new pg.Client({ connectionString: database });
      await admin.connect();
      const holder = await admin.query(
        `select pg_terminate_backend(l.pid) as ok from pg_locks l join pg_stat_activity a on a.pid = l.pid
          where l.locktype = 'advisory' and l.granted and a.datname = $1`,
        [dbName],
      );
      await admin.end();
      expect(holder.rowCount).toBe(1);
      const r = await writer.result;
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^wsmirror: The writer lock was lost/m);
      await waitForOutput(standby, /writer lock held/, 10_000);
      sim.control.act(3);
      await twoMoreCycles(standby);
      const store = await openStore({ database, readonly: true, schema: 'ws_lost' });
      expect(await diffMirror(databaseOf(store), sim.control.truth())).toEqual([]);
      await store.close();
      standby.kill('SIGTERM');
      expect((await standby.result).code).toBe(0);
    } finally {
      for (const p of [writer, standby]) if (p && p.exitCode === null) p.kill('SIGKILL');
      await sim.close();
      await drop();
      cleanup();
    }
  }, 240_000);
});
