import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { postgresDialect } from '../helpers/dialects.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';
import { freePort, metricValue, poll } from './ops-helpers.js';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(4, '0');

describe('files, secrets, retention and demo', () => {
  // Three days in the past, so that the retention case can move it three days on and still stamp its
  // events no later than the local clock (a clock further ahead stops the sync: docs/sync.md).
  const sim = useSimulator({ seed: 23, tickets: 25, deals: 6, startTime: new Date(Date.now() - 3 * 86_400_000 - 60_000) });

  it('creates the data directory 0700 and the mirror, WAL, shm and lock files 0600; modes are overridable', async () => {
    const { dir, cleanup } = tempDir();
    const data = join(dir, 'nested', 'data');
    const env = cliConfig(dir, { url: sim.url, database: join(data, 'mirror.sqlite') });
    const daemon = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
    await waitForOutput(daemon, /"msg":"sync cycle"/);
    expect(mode(data)).toBe('0700');
    expect(mode(join(dir, 'nested'))).toBe('0700');
    for (const f of ['mirror.sqlite', 'mirror.sqlite-wal', 'mirror.sqlite-shm', 'mirror.sqlite.lock'])
      expect(mode(join(data, f)), f).toBe('0600');
    daemon.kill('SIGTERM');
    expect((await daemon.result).code).toBe(0);

    const shared = join(dir, 'shared');
    const env2 = cliConfig(dir, { url: sim.url, database: join(shared, 'm.sqlite'), extra: { fileMode: '0640', directoryMode: '0750' } });
    expect((await runCli(['backfill'], env2)).code).toBe(0);
    expect(mode(shared)).toBe('0750');
    expect(mode(join(shared, 'm.sqlite'))).toBe('0640');
    expect(mode(join(shared, 'm.sqlite.lock'))).toBe('0640');

    // An existing directory and file keep the modes the operator gave them.
    const mine = join(dir, 'mine');
    mkdirSync(mine, { mode: 0o755 });
    const env3 = cliConfig(dir, { url: sim.url, database: join(mine, 'm.sqlite') });
    expect((await runCli(['migrate'], env3)).code).toBe(0);
    expect(mode(mine)).toBe('0755');
    expect(mode(join(mine, 'm.sqlite'))).toBe('0600');
    cleanup();
  });

  it.skipIf(!postgresDialect)('a PostgreSQL password appears in no output: status, logs, errors', async () => {
    const { database, drop } = await postgresDialect!.newDatabase();
    const { dir, cleanup } = tempDir();
    const PASSWORD = 'pw-Zq81-do-not-print';
    const u = new URL(database);
    u.username = u.username || 'postgres';
    u.password = PASSWORD;
    const env = { ...cliConfig(dir, { url: sim.url, database: u.toString() }), WSMIRROR_LOG_LEVEL: 'trace' };
    const outputs: string[] = [];
    for (const args of [['backfill'], ['sync'], ['status'], ['status', '--json'], ['report']]) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).toBe(0);
      outputs.push(r.stdout, r.stderr);
    }
    expect(outputs.join('')).toMatch(/postgres:\/\/127\.0\.0\.1:5432\//);
    const down = new URL(u.toString());
    down.port = String(await freePort());
    for (const args of [['status'], ['sync']]) {
      const r = await runCli(args, { ...env, WSMIRROR_DATABASE: down.toString() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/Cannot connect/);
      outputs.push(r.stdout, r.stderr);
    }
    for (const text of outputs) expect(text).not.toContain(PASSWORD);
    await drop();
    cleanup();
  });

  it('events older than the retention (from the watermark) are deleted, history stays; status and metrics show it', async () => {
    const { dir, cleanup } = tempDir();
    const port = await freePort();
    const env = {
      ...cliConfig(dir, { url: sim.url, extra: { eventsRetentionDays: 2, history: 'all', http: { port } } }),
      WSMIRROR_LOG_LEVEL: 'info',
    };
    expect((await runCli(['backfill', '--history'], env)).code).toBe(0);
    const file = join(dir, 'mirror.sqlite');
    const count = (q: string) => {
      const db = new Database(file, { readonly: true });
      const n = (db.prepare(q).get() as { n: number | string }).n;
      db.close();
      return n;
    };
    const eventsBefore = Number(count('select count(*) n from events'));
    const historyBefore = Number(count('select count(*) n from ticket_history'));
    expect(eventsBefore).toBeGreaterThan(0);
    expect(historyBefore).toBeGreaterThan(0);
    // Three days later upstream: the watermark moves past the retention of every event seen so far.
    sim.control.advanceClock(3 * 86_400_000);
    sim.control.act(5);
    const daemon = spawnCli(['run'], env);
    const base = `http://127.0.0.1:${port}`;
    await poll(async () => metricValue(await (await fetch(`${base}/metrics`)).text(), 'wsmirror_events_pruned_total') > 0, 30_000);
    const watermark = JSON.parse(String(count("select value_json n from sync_state where key = 'watermark'"))) as string;
    const cutoff = Date.parse(watermark) - 2 * 86_400_000;
    // Stored in SQLite's own UTC form; as ISO it parses as UTC whatever the test's time zone.
    const oldest = `${String(count('select min(occurred_at) n from events')).replace(' ', 'T')}Z`;
    expect(Date.parse(oldest)).toBeGreaterThanOrEqual(cutoff);
    expect(Number(count('select count(*) n from events'))).toBeLessThan(eventsBefore);
    expect(Number(count('select count(*) n from ticket_history'))).toBeGreaterThanOrEqual(historyBefore);
    daemon.kill('SIGTERM');
    expect((await daemon.result).code).toBe(0);
    const status = await runCli(['status', '--json'], env);
    const report = JSON.parse(status.stdout);
    expect(report.events).toEqual({ oldest, retentionDays: 2 });
    expect(report.storage.databaseBytes).toBe(statSync(file).size);
    expect(typeof report.storage.walBytes).toBe('number');
    expect((await runCli(['status'], env)).stdout).toMatch(
      /Events: +oldest .*; kept 2 days before the watermark\n.*Storage: +[\d.]+ MiB database, [\d.]+ MiB WAL/s,
    );
    cleanup();
  });

  it('demo --database writes where it is told, not ./data/demo.sqlite, in a private directory it creates', async () => {
    const { dir, cleanup } = tempDir();
    const target = join(dir, 'elsewhere', 'my-demo.sqlite');
    const r = await runCli(['demo', '--database', target, '--tickets', '20', '--deals', '5', '--cycles', '0'], {}, dir);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(target)).toBe(true);
    expect(statSync(join(dir, 'elsewhere')).mode & 0o777).toBe(0o700);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dir, 'data', 'demo.sqlite'))).toBe(false);
    expect(r.stdout).toContain(target);
    cleanup();
  });
});
