import { afterEach, describe, expect, it } from 'vitest';
import { DaemonTelemetry, startHealthServer } from '../../src/daemon/index.js';
import { RECORD_TYPES } from '../../src/entities/index.js';
import { silentLogger } from '../../src/log/index.js';
import { databaseOf } from '../../src/store/internal.js';
import { fromDbTimestamp } from '../../src/util/time.js';
import { dialects } from '../helpers/dialects.js';
import { callApi, harness, type Harness } from '../sync/harness.js';

const TOKEN = 'a-token-of-sixteen-chars';
/** The answer of a ticket PATCH: the ticket as written. */
type Written = { ticket: { updatedAt: string } };

interface Answer {
  status: number;
  body: {
    status?: string;
    error?: string;
    record?: { updatedAt: string | null; deletedAt: string | null; quarantined: { reason: string } | null; pendingSince: string | null };
  };
}

/**
 * GET /wait for one record on the daemon's real http server, with the real sync writing a real
 * mirror (from empty, through the backfill) from the simulator over HTTP. Each wait is registered
 * before the cycle that commits its record runs, so its 200 can only come from that commit; the
 * mirror's row, read apart from the waiters, is the truth it is checked against.
 */
for (const dialect of dialects)
  describe(`GET /wait for a record (${dialect.name})`, () => {
    let h: Harness | null = null;
    let close: (() => Promise<void>) | null = null;
    afterEach(async () => {
      await close?.();
      close = null;
      await h?.close();
      h = null;
    });

    async function setup(maxWaiters?: number) {
      const telemetry = new DaemonTelemetry('*/30 * * * * *', 60_000, { maxWaiters });
      h = await harness({ sim: { seed: 46, tickets: 12, deals: 6 }, dialect, hooks: telemetry.hooks() });
      await h.backfill();
      await h.sync();
      telemetry.attach(h.store);
      const { waiters: wait, recordWaiters: recordWait } = telemetry;
      const at = { host: '127.0.0.1', port: 0, authToken: TOKEN, logger: silentLogger() };
      const server = await startHealthServer({ ...at, metrics: telemetry.metrics, health: telemetry.health, wait, recordWait });
      close = () => server.close();
      const get = async (query: string, token: string | null = TOKEN): Promise<Answer> => {
        const res = await fetch(`${server.url}/wait${query}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
        return { status: res.status, body: (await res.json()) as Answer['body'] };
      };
      return { hh: h, telemetry, get };
    }

    const q = (entity: string, id: string, updatedAt: string, timeoutMs = 30_000) =>
      `?entity=${entity}&id=${encodeURIComponent(id)}&updatedAt=${encodeURIComponent(updatedAt)}&timeoutMs=${timeoutMs}`;

    async function mirrored(hh: Harness, table: 'tickets' | 'deals', id: string) {
      const row = await databaseOf(hh.store).selectFrom(table).select(['updated_at', 'deleted_at']).where('id', '=', id).executeTakeFirst();
      return { updatedAt: fromDbTimestamp(row?.updated_at), deletedAt: fromDbTimestamp(row?.deleted_at) };
    }

    async function registered(telemetry: DaemonTelemetry, n: number) {
      while (telemetry.recordWaiters.size < n) await new Promise((r) => setImmediate(r));
    }

    it('answers 200 once the commit holds the write, deleted or quarantined when so, 504 with the state on timeout', async () => {
      const { hh, telemetry, get } = await setup();
      telemetry.leader(true);
      const [ticket, victim] = (hh.sim.control.truth().tickets as { id: string }[]).map((t) => t.id);
      const [deal] = (hh.sim.control.truth().deals as { id: string }[]).map((d) => d.id);

      // Already held: at once. A write the mirror has not read: waits for the cycle's commit.
      const before = await mirrored(hh, 'tickets', ticket!);
      expect(await get(q('ticket', ticket!, before.updatedAt!))).toMatchObject({ status: 200, body: { status: 'current' } });
      const written = ((await callApi(hh.sim, 'PATCH', `/tickets/${ticket}`, { subject: 'read your own write' })) as Written).ticket;
      const gone = new Date().toISOString();
      await callApi(hh.sim, 'DELETE', `/deals/${deal}`);
      const fixed = ((await callApi(hh.sim, 'PATCH', `/tickets/${victim}`, { priority: 'urgent' })) as Written).ticket;
      hh.sim.control.corrupt('ticket', victim!, 'missing-field');
      const waits = [get(q('ticket', ticket!, written.updatedAt)), get(q('deal', deal!, gone)), get(q('ticket', victim!, fixed.updatedAt))];
      await registered(telemetry, 3);
      // Nothing committed yet: a wait with no time to spare says what the mirror holds.
      expect(await get(q('ticket', ticket!, written.updatedAt, 0))).toMatchObject({
        status: 504,
        body: { status: 'timeout', record: { updatedAt: before.updatedAt, deletedAt: null } },
      });
      expect(telemetry.recordWaiters.size).toBe(3);

      await hh.sync();
      const [current, deleted, quarantined] = await Promise.all(waits);
      expect(current).toMatchObject({ status: 200, body: { status: 'current', record: { updatedAt: written.updatedAt } } });
      expect((await mirrored(hh, 'tickets', ticket!)).updatedAt).toBe(written.updatedAt);
      expect(deleted).toMatchObject({ status: 200, body: { status: 'deleted', record: { deletedAt: expect.any(String) } } });
      expect((await mirrored(hh, 'deals', deal!)).deletedAt).not.toBeNull();
      expect(quarantined).toMatchObject({
        status: 200,
        body: { status: 'quarantined', record: { quarantined: { reason: expect.any(String) } } },
      });
      expect(Date.parse((await mirrored(hh, 'tickets', victim!)).updatedAt!)).toBeLessThan(Date.parse(fixed.updatedAt));

      // A later instant than any write: 504 after timeoutMs, with the record's state.
      const later = new Date(Date.parse(written.updatedAt) + 3_600_000).toISOString();
      expect(await get(q('ticket', ticket!, later, 150))).toMatchObject({
        status: 504,
        body: { status: 'timeout', record: { updatedAt: written.updatedAt, pendingSince: null }, error: expect.stringContaining(ticket!) },
      });
      expect(telemetry.recordWaiters.size).toBe(0);
    });

    it('refuses bad parameters naming the registered types, and answers 401, 503 and 429 as /wait?until does', async () => {
      const { hh, telemetry, get } = await setup(2);
      const [ticket] = (hh.sim.control.truth().tickets as { id: string }[]).map((t) => t.id);
      const now = new Date().toISOString();
      expect((await get(q('ticket', ticket!, now))).status).toBe(503); // still a standby
      telemetry.leader(true);
      expect((await get(q('ticket', ticket!, now), null)).status).toBe(401);

      const unknown = await get(q('contact', 'c_1', now));
      expect(unknown.status).toBe(400);
      for (const type of RECORD_TYPES) expect(unknown.body.error).toContain(type);
      for (const bad of [
        `?entity=ticket&updatedAt=${now}`,
        `?entity=ticket&id=${'x'.repeat(201)}&updatedAt=${now}`,
        `?entity=ticket&id=${ticket}`,
        `?entity=ticket&id=${ticket}&updatedAt=yesterday`,
        `?entity=ticket&id=${ticket}&updatedAt=${now}&timeoutMs=-5`,
        `?entity=ticket&id=${ticket}&updatedAt=${now}&until=${now}`,
        `?id=${ticket}&updatedAt=${now}`,
      ]) {
        const r = await get(bad);
        expect(r.status, bad).toBe(400);
        expect(r.body.error, bad).toMatch(/entity|id|updatedAt|timeoutMs|until/);
      }

      const later = new Date(Date.now() + 3_600_000).toISOString();
      const held = [get(q('ticket', ticket!, later)), get(q('ticket', ticket!, later))];
      await registered(telemetry, 2);
      expect((await get(q('ticket', ticket!, later))).status).toBe(429);
      telemetry.health.state.role = 'stopping';
      expect((await get(q('ticket', ticket!, later))).status).toBe(503);
      telemetry.recordWaiters.close();
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([504, 504]);
    });
  });
