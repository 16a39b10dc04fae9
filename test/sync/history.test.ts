import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { recordRun, runBackfill } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness as makeHarness, type Harness } from './harness.js';

type Ev = { id: string; type: string; entityId: string; occurredAt: string; payload: Record<string, unknown> };
type Row = {
  entity: string;
  field: string;
  from_value: string | null;
  to_value: string | null;
  changed_at: string;
  event_id: string | null;
};

/** The `{ from, to }` of an update event's payload field. */
type Change = { from: unknown; to: unknown };

/** A payload value as history text: ids and statuses as they are, numbers as their JSON. */
const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));
const money = (v: unknown) => (v === null ? null : (Math.round(Number(v) * 100) / 100).toFixed(2));
const stored = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;

/**
 * The history rows the change log tells, computed here from the simulator's events alone (the
 * rules docs/sync.md lists), as `entity|field|from|to|time` keys.
 */
function expectedFromLog(
  events: readonly Ev[],
  pipelines: readonly { stages: { id: string; isWon: boolean; isLost: boolean }[] }[],
): string[] {
  const category = new Map(pipelines.flatMap((p) => p.stages.map((s) => [s.id, s.isWon ? 'won' : s.isLost ? 'lost' : 'open'] as const)));
  const out: string[] = [];
  const add = (e: Ev, field: string, from: unknown, to: unknown) => {
    const f = text(from);
    const t = text(to);
    if (f !== t) out.push(`${e.entityId}|${field}|${f}|${t}|${stored(e.occurredAt)}`);
  };
  for (const e of events) {
    const p = e.payload;
    if (e.type === 'ticket.status_changed') add(e, 'status', p.from, p.to);
    if (e.type === 'ticket.priority_changed') add(e, 'priority', p.from, p.to);
    if (e.type === 'ticket.assigned') add(e, 'assignee_id', p.from, p.to);
    if (e.type === 'ticket.updated' && p.teamId) add(e, 'team_id', (p.teamId as Change).from, (p.teamId as Change).to);
    if (e.type === 'deal.stage_changed') {
      add(e, 'stage_id', p.from, p.to);
      add(e, 'status', category.get(p.from as string), category.get(p.to as string));
    }
    if (e.type === 'deal.updated' && p.amount) add(e, 'amount', money((p.amount as Change).from), money((p.amount as Change).to));
    if (e.type === 'deal.updated' && p.closeDate) add(e, 'close_date', (p.closeDate as Change).from, (p.closeDate as Change).to);
    if (e.type === 'deal.updated' && p.ownerId) add(e, 'owner_id', (p.ownerId as Change).from, (p.ownerId as Change).to);
  }
  return out.sort();
}

async function historyRows(h: Harness, source: 'event' | 'observed'): Promise<Row[]> {
  const r = await sql<Row>`
    SELECT ticket_id AS entity, field, from_value, to_value, changed_at, event_id FROM ticket_history WHERE source = ${source}
    UNION ALL
    SELECT deal_id, field, from_value, to_value, changed_at, event_id FROM deal_history WHERE source = ${source}`.execute(h.store.db);
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
      const events = await h.store.db.selectFrom('events').select('id').execute();
      expect(events.length).toBe((truth.events as unknown[]).length);

      const expected = expectedFromLog(truth.events as Ev[], truth.pipelines as never);
      const fields = new Set(expected.map((k) => k.split('|')[1]));
      // The seeded life moves deals and tickets through every tracked field kind the seed produces.
      for (const f of ['status', 'assignee_id', 'stage_id']) expect(fields).toContain(f);
      expect(keys(await historyRows(h, 'event'))).toEqual(expected);
      expect(await historyRows(h, 'observed')).toEqual([]);

      h.sim.control.act(30);
      const stats = await h.sync();
      expect(stats.eventsNew).toBeLessThan(stats.eventsRead);
      const after = h.sim.control.truth();
      expect(keys(await historyRows(h, 'event'))).toEqual(expectedFromLog(after.events as Ev[], after.pipelines as never));
      // Every change of the live cycle had its event: the re-reads added nothing of their own.
      expect(await historyRows(h, 'observed')).toEqual([]);
      expect(await h.diff()).toEqual([]);
    });

    it('history_complete is 1 exactly for the records created inside the imported range', async () => {
      h = await harness({ sim: { seed: 7, tickets: 60, deals: 40 } });
      const truth = h.sim.control.truth();
      const created = (truth.events as Ev[]).filter((e) => e.type === 'ticket.created' || e.type === 'deal.created');
      const since = created[Math.floor(created.length / 2)]!.occurredAt;
      await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s, { history: since }));
      const inside = new Set(created.filter((e) => Date.parse(e.occurredAt) >= Date.parse(since)).map((e) => e.entityId));
      const flags = await sql<{ id: string; hc: unknown }>`
      SELECT ticket_id AS id, history_complete AS hc FROM rpt_tickets UNION ALL SELECT deal_id, history_complete FROM rpt_deals`.execute(
        h.store.db,
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
      const rows = await h.store.db.selectFrom('events').select('occurred_at').execute();
      expect(rows.length).toBe(all.filter((e) => Date.parse(e.occurredAt) >= Date.parse(since)).length);
      expect(rows.every((r) => String(r.occurred_at) >= stored(new Date(since).toISOString()))).toBe(true);
    });
  });
