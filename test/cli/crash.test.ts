/* eslint-disable @typescript-eslint/no-explicit-any */
import { join } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/index.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { diffMirror } from '../helpers/truth.js';
import { cliConfig, useSimulator } from './env.js';

const SEEDS = 10;

/** A tiny seeded PRNG so each kill point is reproducible from its seed. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A kill point in 2..atLeast: never the probe, never past the requests the run must make. */
function killPoint(seed: number, atLeast: number): number {
  return 2 + Math.floor(mulberry32(seed)() * (atLeast - 1));
}

async function diffFile(path: string, sim: Simulator): Promise<string[]> {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(path, { readonly: true }) }) });
  try {
    return await diffMirror(db, sim.control.truth());
  } finally {
    await db.destroy();
  }
}

/** Every index of a SQLite mirror, by name, with its definition. */
function indexesOf(path: string): Record<string, string | null> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare("select name, sql from sqlite_master where type = 'index' order by name").all() as {
      name: string;
      sql: string | null;
    }[];
    return Object.fromEntries(rows.map((r) => [r.name, r.sql]));
  } finally {
    db.close();
  }
}

/** The indexes of a freshly migrated mirror: what a backfill must end with, whatever killed it before. */
async function migratedIndexes(): Promise<Record<string, string | null>> {
  const { dir, cleanup } = tempDir();
  const store = await openStore({ database: join(dir, 'fresh.sqlite') });
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
  const found = indexesOf(join(dir, 'fresh.sqlite'));
  cleanup();
  return found;
}

/**
 * SIGKILLs the CLI as its k-th API request reaches the simulator, then runs it again to completion.
 * The kill happens before that request is answered, so the run is mid-way by construction: its
 * earlier pages and records have committed, the rest has not. The child must die of the kill;
 * a run that finished first means `k` was past its last request, and the test says so.
 */
async function killAtRequest(sim: Simulator, args: string[], env: Record<string, string>, k: number): Promise<void> {
  let seen = 0;
  const child = spawnCli(args, env);
  const unsubscribe = sim.control.onRequest(() => {
    if (++seen === k) child.kill('SIGKILL');
  });
  const killed = await child.result.finally(unsubscribe);
  expect(killed.signal, `the run ended before its request #${k} (exit ${killed.code}): ${killed.stderr}`).toBe('SIGKILL');
  const again = await runCli(args, env);
  expect(again.code, again.stderr).toBe(0);
}

describe('crash safety (SIGKILL at seeded points of progress)', () => {
  const sim = useSimulator({ seed: 11, tickets: 150, deals: 40 });

  it(`backfill, killed at ${SEEDS} seeded requests, resumes to an exact mirror with every index`, async () => {
    const indexes = await migratedIndexes();
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { dir, cleanup } = tempDir();
      const env = cliConfig(dir, { url: sim.url, extra: { pageSize: 20, concurrency: 4 } });
      // A backfill reads every listed ticket once, so it makes at least that many requests.
      const k = killPoint(seed, sim.control.truth().tickets.length);
      await killAtRequest(sim, ['backfill'], env, k);
      // Sync picks up whatever the simulator's clock-driven automation did meanwhile.
      expect((await runCli(['sync'], env)).code).toBe(0);
      expect(await diffFile(join(dir, 'mirror.sqlite'), sim), `seed ${seed}, killed at request #${k}`).toEqual([]);
      // A first backfill builds its secondary indexes at the end (docs/sync.md, "Backfill"): a kill must not lose them.
      expect(indexesOf(join(dir, 'mirror.sqlite')), `seed ${seed}, killed at request #${k}`).toEqual(indexes);
      cleanup();
    }
  }, 300_000);

  it(`sync, killed at ${SEEDS} seeded requests, resumes to an exact mirror with no duplicate`, async () => {
    const PAGE = 10;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { dir, cleanup } = tempDir();
      const env = cliConfig(dir, { url: sim.url, extra: { pageSize: PAGE, concurrency: 4 } });
      expect((await runCli(['backfill'], env)).code).toBe(0);
      const before = new Set(sim.control.truth().events.map((e: any) => e.id as string));
      sim.control.act(120);
      // The sync must page through every new event and read every ticket or deal they name once.
      const unseen = sim.control.truth().events.filter((e: any) => !before.has(e.id)) as any[];
      const records = new Set(
        unseen.filter((e) => e.entityType === 'ticket' || e.entityType === 'deal').map((e) => `${e.entityType}:${e.entityId}`),
      );
      const k = killPoint(1000 + seed, Math.ceil(unseen.length / PAGE) + records.size);
      await killAtRequest(sim, ['sync'], env, k);
      expect(await diffFile(join(dir, 'mirror.sqlite'), sim), `seed ${seed}, killed at request #${k}`).toEqual([]);
      cleanup();
    }
  }, 300_000);
});
