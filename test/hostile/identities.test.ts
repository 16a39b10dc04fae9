/**
 * Issue 31, identities the upstream document does not promise unique (docs/sync.md, "Hostile
 * upstream"): a message id in two tickets or twice in one, a stage id in two pipelines, an event
 * id reused for another event, and record ids that are no safe path segment. Through the real CLI
 * and the hostile proxy, on every dialect; each case ends with later ordinary changes arriving and
 * the mirror equal to the truth (as the proxy rewrote it, where it did).
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { useHostileMirror, type HostileMirror } from './mirror.js';
import { databaseOf } from '../../src/store/internal.js';

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the simulator's JSON shapes

const truth = (m: HostileMirror) => m.sim.control.truth() as unknown as Rec;
const messagesOf = (m: HostileMirror, id: string) =>
  m.read((s) => databaseOf(s).selectFrom('ticket_messages').select(['id', 'body']).where('ticket_id', '=', id).orderBy('id').execute());
const subjectOf = (m: HostileMirror, id: string) =>
  m.read(async (s) => (await databaseOf(s).selectFrom('tickets').select('subject').where('id', '=', id).executeTakeFirst())?.subject);

for (const dialect of dialects) {
  describe(`hostile identities (${dialect.name})`, () => {
    const m = useHostileMirror(dialect, 33);

    it('one message id in two tickets: each ticket keeps its own message, none replaces the other', async () => {
      const [a, b] = (truth(m).tickets as Rec[]).filter((t) => t.messages.length >= 2);
      const shared = a!.messages[0].id as string;
      const bFirst = b!.messages[0] as Rec;
      m.hostile.faults.rewrite = {
        record(kind, rec) {
          if (kind === 'ticket' && rec.id === b!.id) (rec.messages as Rec[])[0]!.id = shared;
        },
      };
      await m.edit('tickets', a!.id);
      await m.edit('tickets', b!.id);
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      const inA = await messagesOf(m, a!.id);
      const inB = await messagesOf(m, b!.id);
      expect(inA.find((x) => x.id === shared)?.body).toBe(a!.messages[0].body);
      expect(inB.find((x) => x.id === shared)?.body).toBe(bFirst.body);
      expect(inA).toHaveLength(truth(m).tickets.find((t: Rec) => t.id === a!.id).messageCount);
      expect(inB).toHaveLength(truth(m).tickets.find((t: Rec) => t.id === b!.id).messageCount);

      m.clearFaults();
      await m.edit('tickets', b!.id);
      expect((await m.run()).code).toBe(0);
      expect(await m.diff()).toEqual([]);
    }, 60_000);

    it('one message id twice in a ticket: the same message is one row; two different ones quarantine the ticket with a reason', async () => {
      const c = (truth(m).tickets as Rec[]).filter((t) => t.messages.length >= 2)[2]!;
      m.hostile.faults.rewrite = {
        record(kind, rec) {
          if (kind === 'ticket' && rec.id === c.id) (rec.messages as Rec[]).push({ ...(rec.messages as Rec[])[0] });
        },
      };
      await m.edit('tickets', c.id);
      expect((await m.run()).code).toBe(0);
      expect((await messagesOf(m, c.id)).map((x) => x.id)).toEqual((c.messages as Rec[]).map((x) => x.id).sort());
      expect((await m.quarantined('ticket')).find((q) => q.entity_id === c.id)).toBeUndefined();

      const kept = await subjectOf(m, c.id);
      m.hostile.faults.rewrite = {
        record(kind, rec) {
          if (kind === 'ticket' && rec.id === c.id)
            (rec.messages as Rec[]).push({ ...(rec.messages as Rec[])[0], body: 'another message, same id' });
        },
      };
      await m.edit('tickets', c.id);
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      expect((await m.quarantined('ticket')).find((q) => q.entity_id === c.id)?.reason).toMatch(/two different messages share the id/);
      expect(await subjectOf(m, c.id)).toBe(kept);
      expect(await m.dirty()).toEqual([]);

      m.clearFaults();
      await m.edit('tickets', c.id);
      expect((await m.run()).code).toBe(0);
      expect((await m.quarantined('ticket')).find((q) => q.entity_id === c.id)).toBeUndefined();
      expect(await m.diff()).toEqual([]);
    }, 60_000);

    it('two pipelines sharing a stage id with another name and isWon: both stages are kept, and a deal in the won one reports as won', async () => {
      const [p1, p2] = truth(m).pipelines as Rec[];
      const qualified = (p1!.stages as Rec[]).find((s) => !s.isWon && !s.isLost && s.position > 0)!;
      const won = (p2!.stages as Rec[]).find((s) => s.isWon)!;
      const deal = (truth(m).deals as Rec[]).find((d) => d.pipeline.id === p2!.id && d.status === 'open')!;
      const alias = (id: unknown) => (id === won.id ? qualified.id : id);
      // The proxy serves p2's won stage under p1's "Qualified" id, everywhere.
      m.hostile.faults.rewrite = {
        pipelines(list) {
          for (const p of list) for (const s of p.stages as Rec[]) s.id = alias(s.id);
        },
        record(kind, rec) {
          if (kind === 'deal') (rec.stage as Rec).id = alias((rec.stage as Rec).id);
        },
        events(events) {
          for (const e of events) {
            const payload = e.payload as Rec | null;
            if (!payload) continue;
            for (const k of ['from', 'to', 'stageId']) if (k in payload) payload[k] = alias(payload[k]);
          }
        },
      };
      await m.api('PATCH', `/deals/${deal.id}`, { stage: won.id });
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      const stages = await m.read((s) =>
        databaseOf(s).selectFrom('stages').selectAll().where('id', '=', qualified.id).orderBy('pipeline_id').execute(),
      );
      expect(stages.map((s) => [s.pipeline_id, s.name, Number(s.is_won)]).sort()).toEqual(
        [
          [p1!.id, qualified.name, 0],
          [p2!.id, won.name, 1],
        ].sort(),
      );
      const row = (await m.read((s) => sql<Rec>`select * from rpt_deals where deal_id = ${deal.id}`.execute(databaseOf(s)))).rows[0]!;
      expect([row.pipeline_id, row.stage_id, row.stage_name, row.status]).toEqual([p2!.id, qualified.id, won.name, 'won']);
      expect(row.won_at).not.toBeNull();
      const history = await m.read((s) =>
        databaseOf(s).selectFrom('deal_history').select(['field', 'to_value', 'source']).where('deal_id', '=', deal.id).execute(),
      );
      expect(history).toContainEqual({ field: 'status', to_value: 'won', source: 'event' });
      // The open deals per stage count no won deal, and p1's "Qualified" keeps its own deals only.
      const open = (
        await m.read((s) =>
          sql<Rec>`select pipeline_id, stage_name, open_deals from rpt_pipeline_stages where stage_id = ${qualified.id}`.execute(
            databaseOf(s),
          ),
        )
      ).rows;
      const p1Qualified = (truth(m).deals as Rec[]).filter((d) => d.stage.id === qualified.id && d.status === 'open').length;
      expect(open.map((o) => [o.pipeline_id, o.stage_name, Number(o.open_deals)])).toEqual(
        p1Qualified > 0 ? [[p1!.id, qualified.name, p1Qualified]] : [],
      );
      expect(
        await m.diff((t) => {
          for (const p of t.pipelines as Rec[]) if (p.id === p2!.id) for (const s of p.stages as Rec[]) s.id = alias(s.id);
          // Only the deal the sync re-read under the proxy holds the alias; the others were copied before.
          for (const d of t.deals as Rec[]) if (d.id === deal.id) d.stage.id = alias(d.stage.id);
        }),
      ).toEqual([]);

      m.clearFaults();
      await m.edit('deals', deal.id);
      expect((await m.run()).code).toBe(0);
      expect(await m.diff()).toEqual([]);
    }, 60_000);

    it('an event id reused for another record on a later page: that record is still re-read, the reuse quarantined and logged', async () => {
      const [x, y] = m.ticketIds();
      const stored = await m.read((s) =>
        databaseOf(s)
          .selectFrom('events')
          .select(['id'])
          .where('entity_id', '=', x!)
          .orderBy('occurred_at', 'desc')
          .executeTakeFirstOrThrow(),
      );
      const subject = await m.edit('tickets', y!);
      const unseen = (truth(m).events as Rec[])
        .filter((e) => e.entityId === y)
        .reduce((a: Rec, e: Rec) => (Date.parse(e.occurredAt) > Date.parse(a.occurredAt) ? e : a));
      m.hostile.faults.rewrite = {
        events(events) {
          for (const e of events) if (e.id === unseen.id) e.id = stored.id;
        },
      };
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      expect(await subjectOf(m, y!)).toBe(subject);
      expect((await m.quarantined('event')).find((q) => q.entity_id === stored.id)?.reason).toMatch(/already the id of another event/);
      expect(r.stderr).toMatch(/reused event ids for other events/);
      expect(await m.diff()).toEqual([`1 events missing, e.g. ${unseen.id}`]);

      // Served under its own id again, the event is stored, and ordinary changes arrive.
      m.clearFaults();
      await m.edit('tickets', x!);
      expect((await m.run()).code).toBe(0);
      expect(await m.diff()).toEqual([]);
    }, 60_000);

    it('ids that are no safe path segment (., .., a%2F..) are quarantined with a reason and never requested; one with a lone surrogate too', async () => {
      const unsafe = ['..', '.', 'a%2F..'];
      m.hostile.faults.rewrite = {
        events(events) {
          if (events.some((e) => String(e.id).startsWith('ev_path_'))) return;
          unsafe.forEach((entityId, i) =>
            events.unshift({
              id: `ev_path_${i}`,
              type: 'ticket.updated',
              entityType: 'ticket',
              entityId,
              payload: {},
              actor: null,
              occurredAt: new Date(Date.now() - 1000).toISOString(),
            }),
          );
          // No URL can carry this one (encodeURIComponent throws on it), nor any store keep it as an id.
          events.unshift({ ...events[0], id: 'ev_path_surrogate', entityId: 'x\ud800' });
        },
      };
      const requested = m.hostile.log.length;
      const y = m.ticketIds()[4]!;
      const subject = await m.edit('tickets', y);
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      const q = await m.quarantined('ticket');
      for (const id of unsafe) expect(q.find((e) => e.entity_id === id)?.reason, id).toMatch(/is not a safe path segment/);
      expect((await m.quarantined('event')).find((e) => e.entity_id === 'ev_path_surrogate')?.reason).toMatch(
        /entityId: must be valid Unicode/,
      );
      const paths = m.hostile.log.slice(requested).map((p) => p.split('?')[0]!);
      expect(paths.filter((p) => /^\/api\/v1\/tickets\/(\.|\.\.|%2E|a%252F)/i.test(p) || p === '/api/v1/tickets/')).toEqual([]);
      expect(await subjectOf(m, y)).toBe(subject);
      expect(await m.dirty()).toEqual([]);
      // The events themselves are valid and stored; nothing else differs.
      const diff = await m.diff();
      expect(diff).toHaveLength(1);
      expect(diff[0]).toMatch(/^3 events not upstream, e\.g\. ev_path_\d, ev_path_\d, ev_path_\d$/);
    }, 60_000);
  });
}
