import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { recordRun, runBackfill } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { expectedHistory, storedTime as stored, unreadableRecords } from '../helpers/truth-history.js';
import { harness as makeHarness, type Harness } from './harness.js';
import { databaseOf } from '../../src/store/internal.js';

type Ev = { id: string; type: string; entityId: string; occurredAt: string; payload: Record<string, unknown> };
type Row = {
  entity: string;
  field: string;
  from_value: string | null;
  to_value: string | null;
  changed_at: string;
  event_id: string | null;
};

async function historyRows(h: Harness, source: 'event' | 'observed'): Promise<Row[]> {
  const r = await sql<Row>`
    SELECT ticket_id AS entity, field, from_value, to_value, changed_at, event_id FROM ticket_history WHERE source = ${source}
    UNION ALL
    SELECT deal_id, field, from_value, to_value, changed_at, event_id FROM deal_history WHERE source = ${source}`.execute(
    databaseOf(h.store),
  );
  return r.rows;
}
const keys = (rows: readonly Row[]) =>
  rows.map((r) => `${r.entity}|${r.field}|${r.from_value ?? ''}|${r.to_value ?? ''}|${String(r.changed_at)}`).sort();

for (const dialect of dialects)
  describe(`history from the change log on ${dialect.name}`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });
    const harness = (o: Parameters<typeof makeHarness>[0] = {}) => makeHarness({ ...o, dialect });

    it('backfill --history writes one row per field change the log tells, at the event time; the first sync adds no duplicate', async () => {
      h = await harness({ pageSize: 50, sim: { seed: 7, tickets: 60, deals: 40 } });
      await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s, { history: 'all' }));
      const truth = h.sim.control.truth();
      const events = await databaseOf(h.store).selectFrom('events').select('id').execute();
      expect(events.length).toBe((truth.events as unknown[]).length);

      // The history the log tells, from the simulator's canonical changes (test/helpers/truth-history.ts):
      // every change, whatever the upstream dialect spells; none when its log hides them.
      const hidden = new Set(unreadableRecords(truth).keys());
      const expected = expectedHistory(truth, hidden);
      const fields = new Set(expectedHistory(truth).map((k) => k.split('|')[1]));
      // The seeded life moves deals and tickets through every tracked field kind the seed produces.
      for (const f of ['status', 'assignee_id', 'stage_id']) expect(fields).toContain(f);
      expect(keys(await historyRows(h, 'event'))).toEqual(expected);
      expect(await historyRows(h, 'observed')).toEqual([]);

      h.sim.control.act(30);
      const stats = await h.sync();
      expect(stats.eventsNew).toBeLessThan(stats.eventsRead);
      const after = h.sim.control.truth();
      const hiddenAfter = new Set(unreadableRecords(after).keys());
      expect(keys(await historyRows(h, 'event'))).toEqual(expectedHistory(after, hiddenAfter));
      // Every change of the live cycle had its event: the re-reads added nothing of their own, but
      // for records whose changes the log hides (then the re-read observes what it can).
      const observed = await historyRows(h, 'observed');
      expect(observed.filter((r) => !hiddenAfter.has(`ticket:${r.entity}`) && !hiddenAfter.has(`deal:${r.entity}`))).toEqual([]);
      expect(await h.diff()).toEqual([]);
    });

    it('history_complete is 1 exactly for the records created inside the imported range', async () => {
      h = await harness({ sim: { seed: 7, tickets: 60, deals: 40 } });
      const truth = h.sim.control.truth();
      const created = (truth.events as Ev[]).filter((e) => e.type === 'ticket.created' || e.type === 'deal.created');
      const since = created[Math.floor(created.length / 2)]!.occurredAt;
      await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s, { history: since }));
      // Complete: created inside the range, and no change hidden by the log (under an opaque dialect).
      const hidden = unreadableRecords(truth);
      const inside = new Set(
        created
          .filter((e) => Date.parse(e.occurredAt) >= Date.parse(since) && !hidden.has(`${e.type.split('.')[0]}:${e.entityId}`))
          .map((e) => e.entityId),
      );
      const flags = await sql<{ id: string; hc: unknown }>`
      SELECT ticket_id AS id, history_complete AS hc FROM rpt_tickets UNION ALL SELECT deal_id, history_complete FROM rpt_deals`.execute(
        databaseOf(h.store),
      );
      expect(flags.rows.length).toBeGreaterThan(50);
      const complete = flags.rows
        .filter((r) => Number(r.hc) === 1 || r.hc === true)
        .map((r) => r.id)
        .sort();
      expect(complete).toEqual(
        flags.rows
          .map((r) => r.id)
          .filter((id) => inside.has(id))
          .sort(),
      );
      expect(complete.length).toBeGreaterThan(0);
      expect(complete.length).toBeLessThan(flags.rows.length);
    });

    it('from a date copies only the events at or after it', async () => {
      h = await harness();
      const all = h.sim.control.truth().events as Array<{ occurredAt: string }>;
      const since = all[Math.floor(all.length / 2)]!.occurredAt;
      await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s, { history: since }));
      const rows = await databaseOf(h.store).selectFrom('events').select('occurred_at').execute();
      expect(rows.length).toBe(all.filter((e) => Date.parse(e.occurredAt) >= Date.parse(since)).length);
      expect(rows.every((r) => String(r.occurred_at) >= stored(new Date(since).toISOString()))).toBe(true);
    });
  });
