import { afterEach, describe, expect, it } from 'vitest';
import { RECORD_ENTITIES, type RecordEntity } from '../../src/entities/index.js';
import { readSyncState, writeSyncState } from '../../src/store/sync-state.js';
import { databaseOf } from '../../src/store/internal.js';
import {
  emptyStats,
  readBackfill,
  readWatermark,
  runBackfill,
  runSyncCycle,
  STATE_VERSION,
  upgradeStoredState,
  type BackfillState,
} from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness } from './harness.js';

/**
 * The stored backfill state follows the entity registry (src/sync/state.ts): a list the saved
 * state does not name (an entity registered since) gets a count of 0 and is copied once, whatever
 * phase the backfill was saved in. The state is written as a build that never knew tickets would
 * have left it: no ticket rows, no `tickets` count, the list not among those finished.
 */
for (const dialect of dialects)
  describe(`a backfill resumed after an entity was registered, on ${dialect.name}`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    const tickets = () => RECORD_ENTITIES.find((e) => e.plural === 'tickets')!;
    const listReads = (hh: Harness, entity: RecordEntity) =>
      hh.sim.control.requests().filter((r) => r.method === 'GET' && r.path === `/api/v1/${entity.plural}`);

    /** The mirror as a build without `entity` left it: its rows gone, its list unnamed in the saved state. */
    async function forget(hh: Harness, entity: RecordEntity): Promise<void> {
      const db = databaseOf(hh.store);
      for (const table of [entity.historyTable, ...entity.childTables, entity.table]) await db.deleteFrom(table as never).execute();
      const saved = (await readSyncState(hh.store, 'backfill')) as Record<string, unknown> & {
        copied: Record<string, number>;
        finished?: string[];
      };
      const copied = Object.fromEntries(Object.entries(saved.copied).filter(([list]) => list !== entity.plural));
      const finished = (saved.finished ?? []).filter((list) => list !== entity.plural);
      await hh.store.transaction((tx) => writeSyncState(tx, 'backfill', { ...saved, copied, finished }));
    }

    it('saved in a phase after the new list, the resume copies that list and counts it', async () => {
      h = await makeHarness({ dialect, pageSize: 5, sim: { seed: 11, tickets: 12, deals: 6 } });
      h.sim.control.act(15);
      const stop = new AbortController();
      // Stopped once the history read after the lists has committed a page (the log reads between a
      // list's passes report their pages as `history` too, so the saved phase tells them apart).
      const ctx = { ...h.ctx, stopSignal: stop.signal };
      const onProgress = (p: { phase: string }) => void (p.phase === 'history' && stop.abort());
      const stopped = await runBackfill(ctx, emptyStats(), { history: 'all', onProgress });
      expect(stopped.phase).toBe('history');
      await forget(h, tickets());
      const resumed = (await readBackfill(h.store))!;
      expect(resumed.copied.tickets).toBe(0);

      h.sim.control.clearRequests();
      const final = await runBackfill(h.ctx, emptyStats(), { history: 'all' });
      expect(final.phase).toBe('done');
      expect(final.finished).toEqual(expect.arrayContaining(['recent', 'deals', 'tickets', 'history']));
      expect(final.copied.tickets).toBe(h.sim.control.truth().tickets.length);
      expect(listReads(h, tickets()).length).toBeGreaterThan(0);
      // The lists already copied are not read again.
      expect(h.sim.control.requests().filter((r) => r.path === '/api/v1/deals')).toEqual([]);

      // Stored as read: every later command reads it (no count saved as null).
      expect(await readBackfill(h.store)).toEqual(final);
      await runSyncCycle(h.ctx, emptyStats());
      expect(await h.diff()).toEqual([]);
    });

    it('saved done, the new list is copied once before the next sync, and the watermark stays', async () => {
      h = await makeHarness({ dialect, pageSize: 5, sim: { seed: 12, tickets: 9, deals: 5 } });
      await h.backfill();
      h.sim.control.act(6);
      await h.sync();
      const watermark = await readWatermark(h.store);
      await forget(h, tickets());

      expect((await readBackfill(h.store))?.phase).toBe('tickets');
      await expect(runSyncCycle(h.ctx, emptyStats())).rejects.toMatchObject({ code: 'NOT_BACKFILLED' });
      h.sim.control.clearRequests();
      const final = await runBackfill(h.ctx, emptyStats());
      expect(final.phase).toBe('done');
      expect(h.sim.control.requests().filter((r) => r.path === '/api/v1/deals')).toEqual([]);
      expect(listReads(h, tickets()).length).toBeGreaterThan(0);
      expect(await readWatermark(h.store)).toBe(watermark);

      // Copied once: the next backfill state is done, and a sync brings the mirror level.
      expect((await readBackfill(h.store))?.phase).toBe('done');
      await runSyncCycle(h.ctx, emptyStats());
      expect(await h.diff()).toEqual([]);
    });

    it('a version-2 state names the lists its phase implies, and a count saved as null reads as 0', async () => {
      h = await makeHarness({ dialect, sim: { seed: 13, tickets: 1, deals: 1 } });
      const v2: Omit<BackfillState, 'finished' | 'copied'> & { copied: Record<string, number | null> } = {
        phase: 'history',
        handover: '2024-05-01T10:00:00.000Z',
        cursor: 'c-1',
        startedAt: '2024-05-01T10:00:01.000Z',
        copied: { deals: 3, tickets: null, events: 7 },
        history: 'all',
      };
      await h.store.transaction(async (tx) => {
        await writeSyncState(tx, 'state_version', 2);
        await writeSyncState(tx, 'backfill', v2);
      });
      const expected = { ...v2, finished: ['recent', 'deals', 'tickets'], copied: { deals: 3, tickets: 0, events: 7 } };
      expect(await readBackfill(h.store)).toEqual(expected);
      expect(await upgradeStoredState(h.store)).toBe(2);
      expect(await readSyncState(h.store, 'state_version')).toBe(STATE_VERSION);
      expect(await readSyncState(h.store, 'backfill')).toEqual(expected);

      await h.store.transaction(async (tx) => {
        await writeSyncState(tx, 'state_version', 2);
        await writeSyncState(tx, 'backfill', { ...v2, phase: 'done', history: 'none' });
      });
      expect((await readBackfill(h.store))?.finished).toEqual(['recent', 'deals', 'tickets']);
    });
  });
