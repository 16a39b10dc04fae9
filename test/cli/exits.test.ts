import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';

/** The real CLI as a child process: exit codes, one-sentence errors, and no write on a bad key. */
describe('CLI exits', () => {
  const sim = useSimulator({ seed: 3, tickets: 20, deals: 8 });

  it('a rejected key exits 3 with one sentence, before anything is written', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url, apiKey: 'wrong-key-0123456789' });
    for (const command of ['backfill', 'sync']) {
      const r = await runCli([command], env);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/rejected the API key/i);
      expect(r.stderr).not.toContain('wrong-key-0123456789');
      expect(r.stdout).not.toContain('wrong-key-0123456789');
    }
    expect(existsSync(join(dir, 'mirror.sqlite'))).toBe(false);
    cleanup();
  });

  it('an invalid config exits 2 naming every bad key, the value and what is allowed', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url, extra: { pageSize: 0, concurrency: 'many', schedule: 'hourly' } });
    const r = await runCli(['sync'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('pageSize: got 0');
    expect(r.stderr).toContain('concurrency: got "many"');
    expect(r.stderr).toContain('schedule: got "hourly"');
    cleanup();
  });

  it('a missing base URL exits 2 and says which variable to set', async () => {
    const { dir, cleanup } = tempDir();
    const env = { ...cliConfig(dir, { url: sim.url }), WSMIRROR_BASE_URL: undefined };
    const r = await runCli(['sync'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('WSMIRROR_BASE_URL');
    cleanup();
  });

  it('an unreachable upstream exits 4 after the retries', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: 'http://127.0.0.1:9' });
    const r = await runCli(['backfill'], env);
    expect(r.code).toBe(4);
    // Retry warnings are JSON log lines; the one plain sentence closes stderr.
    const plain = r.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('{'));
    expect(plain).toHaveLength(1);
    expect(plain[0]).toMatch(/^wsmirror: The workspace is unavailable.*try again later/);
    cleanup();
  });

  it('sync before any backfill exits 2 and says to backfill', async () => {
    const { dir, cleanup } = tempDir();
    const r = await runCli(['sync'], cliConfig(dir, { url: sim.url }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/backfill/);
    cleanup();
  });

  it('a second writing command exits 2 while a daemon holds the mirror; readers still read', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url });
    const daemon = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
    try {
      await waitForOutput(daemon, /sync cycle/);
      const second = await runCli(['sync'], env);
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(/another|lock|writing/i);
      const status = await runCli(['status', '--json'], env);
      expect(status.code).toBe(0);
      const parsed = JSON.parse(status.stdout) as { counts: Record<string, number>; backfill: { phase: string } };
      expect(parsed.backfill.phase).toBe('done');
      expect(parsed.counts.tickets).toBe(20);
    } finally {
      daemon.kill('SIGTERM');
      const done = await daemon.result;
      expect(done.code).toBe(0);
    }
    cleanup();
  });

  it('an invalid upstream record still exits 0, with the record in quarantine', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url });
    expect((await runCli(['backfill'], env)).code).toBe(0);
    const deal = (sim.control.truth().deals as Array<{ id: string }>)[0]!.id;
    sim.control.corrupt('deal', deal, 'wrong-type');
    const r = await runCli(['sync'], env);
    expect(r.code).toBe(0);
    const db = new Database(join(dir, 'mirror.sqlite'), { readonly: true });
    const rows = db.prepare('select entity_type, entity_id from quarantine').all();
    db.close();
    expect(rows).toEqual([{ entity_type: 'deal', entity_id: deal }]);
    sim.control.repair('deal', deal);
    cleanup();
  });
});
