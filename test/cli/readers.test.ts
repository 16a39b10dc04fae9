import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';

function sqlite3Path(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v sqlite3'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const sqlite3 = sqlite3Path();
if (!sqlite3) console.warn('readers.test: skipped: no sqlite3 client on PATH (.ci/run installs Debian sqlite3)');

function query(file: string, sql: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(sqlite3!, [file, sql]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A BI-style reader (the real sqlite3 client, no busy timeout) polls while a backfill writes. */
describe.skipIf(!sqlite3)('readers are never blocked', () => {
  const sim = useSimulator({ seed: 4, tickets: 2000, deals: 100 });

  it('a sqlite3 process querying in a loop during a 2,000-ticket backfill never sees "database is locked"', async () => {
    const { dir, cleanup } = tempDir();
    const file = join(dir, 'mirror.sqlite');
    const env = cliConfig(dir, { url: sim.url, extra: { maxRequestsPerSecond: 1000 } });
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const backfill = spawnCli(['backfill'], env);
    let done = false;
    void backfill.result.then(() => (done = true));
    // Mid-way through the ticket reads, slow the answers until the reader has polled enough and seen
    // the backfill in progress: how many polls fit in a backfill is then not left to the machine's speed.
    let requests = 0;
    let released = false;
    const unsubscribe = sim.control.onRequest(() => {
      if (++requests === 1000 && !released) sim.control.setFaults({ latencyMs: 2000 });
    });
    const inProgress = (n: number) => n > 0 && n < 2000;
    const errors: string[] = [];
    const seen: number[] = [];
    try {
      while (!done) {
        const r = await query(file, 'select count(*) from tickets; select count(*) from ticket_messages;');
        if (r.code !== 0 || r.stderr) errors.push(r.stderr || `exit ${r.code}`);
        else seen.push(Number(r.stdout.split('\n')[0]));
        if (!released && seen.length > 20 && seen.some(inProgress)) {
          released = true;
          sim.control.setFaults({ latencyMs: 0 });
        }
      }
    } finally {
      unsubscribe();
      sim.control.setFaults({ latencyMs: 0 });
    }
    const result = await backfill.result;
    expect(result.code, result.stderr).toBe(0);
    expect(errors).toEqual([]);
    expect(seen.length).toBeGreaterThan(20);
    expect(seen.some(inProgress)).toBe(true); // the reader saw the backfill in progress
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
    cleanup();
  }, 120_000);
});
