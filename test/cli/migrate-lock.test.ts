import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../../migrations/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { diffMirror } from '../helpers/truth.js';
import { cliConfig, useSimulator } from './env.js';
import { databaseOf } from '../../src/store/internal.js';

const migrations = await loadMigrations();

const FIRST = Object.keys(migrations)[0]!;
const ALL = Object.keys(migrations);

/** What a schema change would alter: applied migrations and every table or view. */
async function schemaFingerprint(store: Store): Promise<string> {
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(databaseOf(store));
  const objects =
    store.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where name not like 'sqlite_%' order by name`.execute(databaseOf(store))
      : await sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = current_schema() order by 1`.execute(
          databaseOf(store),
        );
  return JSON.stringify({ applied: applied.rows.map((r) => r.name), objects: objects.rows.map((r) => r.name) });
}

function migrator(db: ReturnType<typeof databaseOf>, schema: string | undefined): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

describe.each(dialects)('migrations run only under the writer lock ($name)', (dialect) => {
  const sim = useSimulator({ seed: 31, tickets: 25, deals: 8 });
  const schema = dialect.name === 'postgres' ? 'mirror_a' : undefined;

  async function setup() {
    const { dir, cleanup } = tempDir();
    const { database, drop } = await dialect.newDatabase();
    const env = cliConfig(dir, { url: sim.url, database, extra: schema ? { schema } : {} });
    return { dir, database, env, done: async () => (await drop(), cleanup()) };
  }

  it('a standby and a refused one-shot command leave a mirror with a pending migration untouched; the new writer migrates', async () => {
    const { database, env, done } = await setup();
    const holder = await openStore({ database, ...(schema ? { schema } : {}) });
    const lock = await holder.acquireWriterLock({ wait: false });
    if (schema) await sql`create schema if not exists ${sql.id(schema)}`.execute(databaseOf(holder));
    const r = await migrator(databaseOf(holder), schema).migrateTo(FIRST);
    expect(r.error).toBeUndefined();
    const before = await schemaFingerprint(holder);
    expect(JSON.parse(before).applied).toEqual([FIRST]);

    for (const command of [['sync'], ['backfill'], ['migrate']]) {
      const refused = await runCli(command, env);
      expect(refused.code, command[0]).toBe(2);
      expect(refused.stderr).toMatch(/Another wsmirror process is writing/);
    }
    const standby = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
    await waitForOutput(standby, /hot standby/);
    const status = await runCli(['status'], env);
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/needs migrations/);
    expect(await schemaFingerprint(holder)).toBe(before);

    await lock.release();
    await waitForOutput(standby, /"msg":"sync cycle"/, 30_000);
    expect(JSON.parse(await schemaFingerprint(holder)).applied).toEqual(ALL);
    standby.kill('SIGTERM');
    expect((await standby.result).code).toBe(0);
    await holder.close();
    await done();
  });

  it('a writer that finds the schema newer than it knows exits 2 telling the operator to upgrade, and writes nothing', async () => {
    const { database, env, done } = await setup();
    expect((await runCli(['backfill'], env)).code).toBe(0);
    const store = await openStore({ database, ...(schema ? { schema } : {}) });
    await sql`insert into kysely_migration (name, timestamp) values ('9000_from_the_future', '2030-01-01T00:00:00.000Z')`.execute(
      databaseOf(store),
    );
    const runsBefore = await databaseOf(store)
      .selectFrom('sync_runs')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    for (const command of [['sync'], ['run'], ['migrate']]) {
      const r = await runCli(command, env);
      expect(r.code, command[0]).toBe(2);
      expect(r.stderr).toMatch(/migrated by a newer wsmirror \(unknown migration\(s\): 9000_from_the_future\); upgrade wsmirror/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    // Readers still read a newer schema: only writing with old code is unsafe.
    expect((await runCli(['status'], env)).code).toBe(0);
    const runsAfter = await databaseOf(store)
      .selectFrom('sync_runs')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(runsAfter.n)).toBe(Number(runsBefore.n));
    await store.close();
    await done();
  });

  it('two one-shot writers started at once on a fresh database: one writes, the other exits 2, neither fails', async () => {
    const { env, done } = await setup();
    const results = await Promise.all([runCli(['backfill'], env), runCli(['backfill'], env)]);
    const codes = results.map((r) => r.code).sort();
    expect(codes[0]).toBe(0);
    for (const r of results) {
      expect([0, 2]).toContain(r.code);
      if (r.code === 2) expect(r.stderr).toMatch(/Another wsmirror process is writing/);
      expect(r.stderr).not.toMatch(/UNIQUE|kysely_migration|duplicate key/);
    }
    await done();
  });

  it('two runs started at once on a fresh database: one writes, the other waits as standby; the mirror equals the truth', async () => {
    const { database, env, done } = await setup();
    const a = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
    const b = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
    const out = { a: '', b: '' };
    a.stderr.on('data', (d: Buffer) => (out.a += d.toString()));
    b.stderr.on('data', (d: Buffer) => (out.b += d.toString()));
    // Both waits are bounded and name both outputs: a standby that exits instead of waiting
    // fails here with what it said, not at the suite's timeout.
    const said = () => `\n--- a (exit ${a.exitCode}):\n${out.a}\n--- b (exit ${b.exitCode}):\n${out.b}`;
    await Promise.race([waitForOutput(a, /"msg":"sync cycle"/, 30_000), waitForOutput(b, /"msg":"sync cycle"/, 30_000)]).catch(
      (err: Error) => {
        throw new Error(`${err.message}${said()}`);
      },
    );
    const standby = /sync cycle/.test(out.a) ? 'b' : 'a';
    const deadline = Date.now() + 30_000;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (/hot standby/.test(out[standby])) return resolve();
        if ({ a, b }[standby].exitCode !== null || Date.now() > deadline)
          return reject(new Error(`${standby} did not wait as a hot standby${said()}`));
        setTimeout(check, 50);
      };
      check();
    });
    expect(a.exitCode).toBeNull();
    expect(b.exitCode).toBeNull();
    const store = await openStore({ database, readonly: true, ...(schema ? { schema } : {}) });
    expect(await diffMirror(databaseOf(store), sim.control.truth())).toEqual([]);
    await store.close();
    a.kill('SIGTERM');
    b.kill('SIGTERM');
    expect((await a.result).code).toBe(0);
    expect((await b.result).code).toBe(0);
    expect(out.a + out.b).not.toMatch(/UNIQUE|duplicate key/);
    await done();
  });
});
