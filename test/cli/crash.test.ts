/* eslint-disable @typescript-eslint/no-explicit-any */
import { join } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { diffMirror } from '../helpers/truth.js';
import { cliConfig, useSimulator } from './env.js';

const SEEDS = 10;

/** A tiny seeded PRNG so each kill moment is reproducible from its seed. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function diffFile(path: string, sim: Simulator): Promise<string[]> {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(path, { readonly: true }) }) });
  try {
    return await diffMirror(db, sim.control.truth());
  } finally {
    await db.destroy();
  }
}

/** Kill with SIGKILL at a random moment, run again to completion; the mirror must be exact. */
async function killAndFinish(args: string[], env: Record<string, string>, killAfterMs: number): Promise<boolean> {
  const child = spawnCli(args, env);
  await new Promise((r) => setTimeout(r, killAfterMs));
  const midRun = child.exitCode === null;
  child.kill('SIGKILL');
  await child.result;
  const again = await runCli(args, env);
  expect(again.code, again.stderr).toBe(0);
  return midRun;
}

describe('crash safety (SIGKILL at random moments)', () => {
  // Latency stretches a run over enough time for the kills to land at different stages.
  const sim = useSimulator({ seed: 11, tickets: 150, deals: 40, faults: { latencyMs: 3 } });

  it(`backfill, killed at ${SEEDS} random moments, resumes to an exact mirror`, async () => {
    let hits = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { dir, cleanup } = tempDir();
      const env = cliConfig(dir, { url: sim.url, extra: { pageSize: 20, concurrency: 4 } });
      const killAt = 300 + Math.floor(mulberry32(seed)() * 1100);
      if (await killAndFinish(['backfill'], env, killAt)) hits++;
      // Sync picks up whatever the simulator's clock-driven automation did meanwhile.
      expect((await runCli(['sync'], env)).code).toBe(0);
      expect(await diffFile(join(dir, 'mirror.sqlite'), sim), `seed ${seed}, killed at ${killAt} ms`).toEqual([]);
      cleanup();
    }
    // The kills must land while the work runs, or the test proves nothing.
    expect(hits).toBeGreaterThanOrEqual(SEEDS - 2);
  }, 300_000);

  it(`sync, killed at ${SEEDS} random moments, resumes to an exact mirror with no duplicate`, async () => {
    let hits = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { dir, cleanup } = tempDir();
      const env = cliConfig(dir, { url: sim.url, extra: { pageSize: 10, concurrency: 4 } });
      expect((await runCli(['backfill'], env)).code).toBe(0);
      sim.control.act(120);
      const killAt = 250 + Math.floor(mulberry32(1000 + seed)() * 1200);
      if (await killAndFinish(['sync'], env, killAt)) hits++;
      expect(await diffFile(join(dir, 'mirror.sqlite'), sim), `seed ${seed}, killed at ${killAt} ms`).toEqual([]);
      cleanup();
    }
    expect(hits).toBeGreaterThanOrEqual(SEEDS - 2);
  }, 300_000);
});
