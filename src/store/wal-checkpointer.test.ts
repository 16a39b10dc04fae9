import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openStore } from './open.js';
import { startWalCheckpointer } from './wal-checkpointer.js';
import { writeSyncState } from './sync-state.js';

/**
 * The WAL-index header (the `-shm` file, native byte order): `mxFrame`, the last committed frame,
 * at byte 16; the checkpoint's `nBackfill`, frames already copied into the database, at byte 96.
 */
function walProgress(path: string): { mxFrame: number; nBackfill: number } {
  const shm = readFileSync(`${path}-shm`);
  return { mxFrame: shm.readUInt32LE(16), nBackfill: shm.readUInt32LE(96) };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
}

const blob = 'x'.repeat(10_000);

/** A WAL-mode writer that never checkpoints by itself: any copied frame is someone else's work. */
function manualWriter(): { path: string; writer: Database.Database; insert: Database.Statement } {
  const path = join(mkdtempSync(join(tmpdir(), 'wsm-wal-')), 'm.sqlite');
  const writer = new Database(path);
  writer.pragma('journal_mode = WAL');
  writer.pragma('synchronous = NORMAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec('create table t (id integer primary key, v text)');
  return { path, writer, insert: writer.prepare('insert into t (v) values (?)') };
}

describe('the WAL checkpoint thread', () => {
  it('copies committed frames back while the writer never checkpoints, so the WAL starts over', async () => {
    const { path, writer, insert } = manualWriter();
    for (let tx = 0; tx < 20; tx++) writer.transaction(() => Array.from({ length: 10 }, () => insert.run(blob)))();
    const written = walProgress(path).mxFrame;
    expect(written).toBeGreaterThan(500);
    expect(walProgress(path).nBackfill).toBe(0);

    const thread = startWalCheckpointer({ path, intervalMs: 10 });
    await until(() => walProgress(path).nBackfill === written);
    // Everything is in the database now, so the next transaction writes from the WAL's start.
    insert.run('after');
    expect(walProgress(path).mxFrame).toBeLessThan(10);
    await thread.stop();
    writer.close();
  });

  it('copies everything committed when asked to catch up, on its own thread, and says when it is gone', async () => {
    const { path, writer, insert } = manualWriter();
    // Passes an hour apart: whatever gets copied, the catch-up copied it.
    const thread = startWalCheckpointer({ path, intervalMs: 3_600_000 });
    for (let tx = 0; tx < 20; tx++) writer.transaction(() => Array.from({ length: 10 }, () => insert.run(blob)))();
    const written = walProgress(path).mxFrame;
    expect(written).toBeGreaterThan(500);
    expect(walProgress(path).nBackfill).toBe(0);
    expect(await thread.catchUp()).toBe(true);
    expect(walProgress(path)).toEqual({ mxFrame: written, nBackfill: written });
    await thread.stop();
    // Gone: the caller checkpoints itself (the store's commit hook).
    expect(await thread.catchUp()).toBe(false);
    writer.close();
  });

  it('runs beside a writable store, keeps its WAL bounded, and is gone before the store closes', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'wsm-wal-')), 'm.sqlite');
    // No pause between the thread's passes: it holds the checkpoint lock most of the time, so the
    // writer's own automatic checkpoint (a backstop at 64 MiB) mostly finds it taken, as on a
    // loaded machine (where the WAL once reached 33 MB when this test bypassed the store's commit
    // hook). The bound below is the hook's doing: without it the WAL passed 17 MiB in 3 runs of 3.
    const store = await openStore({ database: path, walCheckpointIntervalMs: 0 });
    await store.migrate();
    let largest = 0;
    for (let round = 0; round < 160; round++) {
      // 160 transactions of about 0.5 MB, back to back, through the store's own transaction (whose
      // commit hook bounds the WAL): 80 MB through a WAL bounded at 16 MiB plus one transaction.
      await store.transaction(async (tx) => {
        for (let i = 0; i < 50; i++) await writeSyncState(tx, `scratch-${round}-${i}`, blob);
      });
      largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    expect(largest).toBeLessThanOrEqual(17 * 1024 * 1024);
    await store.close();
    // The thread's connection closed first, so the store's was the last and removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('holds its passes off while a TRUNCATE checkpoint runs, so that one never reads as busy', async () => {
    const { path, writer, insert } = manualWriter();
    // No pause between passes: the thread is checkpointing most of the time the WAL moves, so a
    // TRUNCATE run beside it, not through `exclusive`, finds the checkpoint lock taken (it did
    // within 30 rounds when tried).
    const thread = startWalCheckpointer({ path, intervalMs: 0 });
    for (let round = 0; round < 200; round++) {
      writer.transaction(() => Array.from({ length: 20 }, () => insert.run(blob)))();
      const [result] = (await thread.exclusive(() => writer.pragma('wal_checkpoint(TRUNCATE)'))) as { busy: number }[];
      expect(result?.busy, `round ${round}`).toBe(0);
    }
    await thread.stop();
    writer.close();
  });
});
