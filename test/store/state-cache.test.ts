import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { openStore, type Store } from '../../src/store/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { readSyncState, writeSyncState } from '../../src/store/sync-state.js';

// The writer's copy of sync_state (src/store/state-cache.ts): while a store holds the writer lock
// its reads come from memory and a write of the value already stored is no statement; a
// rolled-back write never reaches the copy; without the lock every read goes to the database.
for (const dialect of dialects) {
  describe(`the sync state's cache (${dialect.name})`, () => {
    let database = '';
    let drop: () => Promise<void> = () => Promise.resolve();
    const opened: Store[] = [];
    const open = async () => {
      const store = await openStore({ database });
      opened.push(store);
      return store;
    };

    beforeEach(async () => {
      ({ database, drop } = await dialect.newDatabase());
      const store = await open();
      await store.migrate();
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await drop();
    });

    const stamp = async (store: Store, key: string) =>
      (await databaseOf(store).selectFrom('sync_state').select('updated_at').where('key', '=', key).executeTakeFirst())?.updated_at;
    const setStamp = (store: Store, key: string) =>
      databaseOf(store).updateTable('sync_state').set({ updated_at: '2000-01-01 00:00:00.000' }).where('key', '=', key).execute();

    it('serves the lock holder from memory until the lock is taken again', async () => {
      const writer = opened[0]!;
      const lock = await writer.acquireWriterLock({ wait: false });
      await writer.transaction((tx) => writeSyncState(tx, 'watermark', '2024-05-01T00:00:00.000Z'));
      expect(await readSyncState(writer, 'watermark')).toBe('2024-05-01T00:00:00.000Z');
      // A write no writer should make while another holds the lock: the holder does not see it...
      const other = await open();
      await other.transaction((tx) => writeSyncState(tx, 'watermark', '2024-06-01T00:00:00.000Z'));
      expect(await readSyncState(writer, 'watermark')).toBe('2024-05-01T00:00:00.000Z');
      // ...and a store without the lock reads the table, as every reader does.
      expect(await readSyncState(other, 'watermark')).toBe('2024-06-01T00:00:00.000Z');
      // The next holder (a fleet's next slice) reads the table afresh.
      await lock.release();
      expect(await readSyncState(writer, 'watermark')).toBe('2024-06-01T00:00:00.000Z');
      const again = await writer.acquireWriterLock({ wait: false });
      expect(await readSyncState(writer, 'watermark')).toBe('2024-06-01T00:00:00.000Z');
      await again.release();
    });

    it('keeps a rolled-back write out of memory, and shows a transaction its own writes', async () => {
      const writer = opened[0]!;
      await writer.acquireWriterLock({ wait: false });
      await writer.transaction((tx) => writeSyncState(tx, 'window', { since: null, cursor: 'c1' }));
      await expect(
        writer.transaction(async (tx) => {
          await writeSyncState(tx, 'window', { since: null, cursor: 'c2' });
          expect(await readSyncState(tx, 'window')).toEqual({ since: null, cursor: 'c2' });
          await writeSyncState(tx, 'late_event', { seenAt: 'x' });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await readSyncState(writer, 'window')).toEqual({ since: null, cursor: 'c1' });
      expect(await readSyncState(writer, 'late_event')).toBeUndefined();
      // A deletion commits to memory as to the table.
      await writer.transaction((tx) => writeSyncState(tx, 'window', null));
      expect(await readSyncState(writer, 'window')).toBeUndefined();
      expect(await readSyncState(await open(), 'window')).toBeUndefined();
    });

    it('writes nothing for a value already stored, and writes a changed one', async () => {
      const writer = opened[0]!;
      await writer.acquireWriterLock({ wait: false });
      await writer.transaction((tx) => writeSyncState(tx, 'read_floor', '2024-05-01T00:00:00.000Z'));
      await setStamp(writer, 'read_floor');
      await writer.transaction((tx) => writeSyncState(tx, 'read_floor', '2024-05-01T00:00:00.000Z'));
      expect(String(await stamp(writer, 'read_floor'))).toMatch(/^2000-01-01/);
      await writer.transaction((tx) => writeSyncState(tx, 'read_floor', '2024-05-02T00:00:00.000Z'));
      expect(String(await stamp(writer, 'read_floor'))).not.toMatch(/^2000-01-01/);
      expect(await readSyncState(await open(), 'read_floor')).toBe('2024-05-02T00:00:00.000Z');
    });

    it('without the lock, writes every value and reads the table each time', async () => {
      const store = opened[0]!;
      await store.transaction((tx) => writeSyncState(tx, 'read_floor', '2024-05-01T00:00:00.000Z'));
      await setStamp(store, 'read_floor');
      await store.transaction((tx) => writeSyncState(tx, 'read_floor', '2024-05-01T00:00:00.000Z'));
      expect(String(await stamp(store, 'read_floor'))).not.toMatch(/^2000-01-01/);
      const other = await open();
      await other.transaction((tx) => writeSyncState(tx, 'read_floor', '2024-05-03T00:00:00.000Z'));
      expect(await readSyncState(store, 'read_floor')).toBe('2024-05-03T00:00:00.000Z');
    });
  });
}
