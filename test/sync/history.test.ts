import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { recordRun, runBackfill } from '../../src/sync/index.js';
import { harness, type Harness } from './harness.js';

describe('backfill --history', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('copies the whole change log, feeds ticket_history from status changes, and the first sync adds no duplicate', async () => {
    h = await harness({ pageSize: 50 });
    await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s, { history: 'all' }));
    const truth = h.sim.control.truth();
    const events = await h.store.db.selectFrom('events').select('id').execute();
    expect(events.length).toBe((truth.events as unknown[]).length);
    const statusChanges = (truth.events as Array<{ type: string; payload: { from?: unknown; to?: unknown } }>).filter(
      (e) => e.type === 'ticket.status_changed' && typeof e.payload.from === 'string' && typeof e.payload.to === 'string',
    ).length;
    const fromEvents = await sql<{ n: number }>`select count(*) as n from ticket_history where source = 'event'`.execute(h.store.db);
    expect(statusChanges).toBeGreaterThan(0);
    expect(Number(fromEvents.rows[0]!.n)).toBe(statusChanges);
    h.sim.control.act(10);
    const stats = await h.sync();
    expect(stats.eventsNew).toBeLessThan(stats.eventsRead);
    expect(await h.diff()).toEqual([]);
  });

  it('from a date copies only the events at or after it', async () => {
    h = await harness();
    const all = h.sim.control.truth().events as Array<{ occurredAt: string }>;
    const since = all[Math.floor(all.length / 2)]!.occurredAt;
    await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s, { history: since }));
    const rows = await h.store.db.selectFrom('events').select('occurred_at').execute();
    expect(rows.length).toBe(all.filter((e) => Date.parse(e.occurredAt) >= Date.parse(since)).length);
    expect(rows.every((r) => Date.parse(String(r.occurred_at)) >= Date.parse(since))).toBe(true);
  });
});
