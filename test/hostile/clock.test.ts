/**
 * Issue 31, clocks: the upstream's `Date` header is its clock only within 300 s of the local one
 * (docs/sync.md, "Hostile upstream"). Through the real CLI and the hostile proxy, on every dialect:
 * a Date of 2100 or 1970 on every answer, an event stamped 2099, an upstream whose events are
 * stamped by a clock running a day ahead. Each case ends with ordinary changes arriving and the
 * mirror equal to the truth.
 */
import { describe, expect, it } from 'vitest';
import { MAX_AHEAD_OF_LOCAL_MS } from '../../src/util/clock-bounds.js';
import { readReadFloor, readWatermark } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { useHostileMirror, type HostileMirror } from './mirror.js';
import { databaseOf } from '../../src/store/internal.js';

const DATE_2100 = 'Fri, 01 Jan 2100 00:00:00 GMT';
const DATE_1970 = 'Thu, 01 Jan 1970 00:00:10 GMT';

interface Status {
  watermark: string | null;
  upstream: { head: string | null; lagSeconds: number | null; clockSkewSeconds: number | null; clockTrusted: boolean };
}

async function status(m: HostileMirror): Promise<{ json: Status; text: string }> {
  const json = JSON.parse((await m.run(['status', '--json'])).stdout) as Status;
  return { json, text: (await m.run(['status'])).stdout };
}

/** The ordinary change arrives and the whole mirror equals the truth, with the proxy honest again. */
async function settles(m: HostileMirror): Promise<void> {
  m.clearFaults();
  const id = m.ticketIds()[6]!;
  const subject = await m.edit('tickets', id);
  const r = await m.run();
  expect(r.code, r.stderr).toBe(0);
  expect(
    await m.read(
      async (s) => (await databaseOf(s).selectFrom('tickets').select('subject').where('id', '=', id).executeTakeFirst())?.subject,
    ),
  ).toBe(subject);
  expect(await m.diff()).toEqual([]);
}

const skewWarnings = (stderr: string) => stderr.split('\n').filter((l) => /beyond the 300 s tolerance; the local clock bounds/.test(l));

for (const dialect of dialects) {
  describe(`a hostile upstream clock (${dialect.name})`, () => {
    const m = useHostileMirror(dialect, 31);

    it('a Date of 2100 on every answer: an event stamped 2099 is quarantined, the watermark stays within the local clock plus the tolerance, later events arrive', async () => {
      const [x, y, z] = m.ticketIds();
      m.hostile.faults.date = DATE_2100;
      m.hostile.faults.injectEvent = {
        id: 'ev_2099',
        type: 'ticket.updated',
        entityType: 'ticket',
        entityId: x,
        payload: {},
        actor: null,
        occurredAt: '2099-06-01T00:00:00.000Z',
      };
      const subject = await m.edit('tickets', y!);
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      const q = (await m.quarantined('event')).find((e) => e.entity_id === 'ev_2099');
      expect(q?.reason).toMatch(/ahead of the local clock .*Date header 2100-01-01T00:00:00.000Z.*beyond the 300 s it may differ by/);
      // One warning per cycle, naming the skew.
      expect(skewWarnings(r.stderr)).toHaveLength(1);
      const watermark = await m.read(readWatermark);
      expect(Date.parse(watermark!)).toBeLessThanOrEqual(Date.now() + MAX_AHEAD_OF_LOCAL_MS);
      const newest = Math.max(...(m.sim.control.truth().events as Array<{ occurredAt: string }>).map((e) => Date.parse(e.occurredAt)));
      expect(Date.parse(watermark!)).toBeLessThanOrEqual(newest);
      // The read floor comes only from a trusted Date: none was stored with this watermark.
      expect(await m.read(readReadFloor)).toBeNull();
      expect(
        await m.read(
          async (s) => (await databaseOf(s).selectFrom('tickets').select('subject').where('id', '=', y!).executeTakeFirst())?.subject,
        ),
      ).toBe(subject);

      // The skew is visible: status (text and JSON) from its own request.
      const st = await status(m);
      expect(st.json.upstream.clockTrusted).toBe(false);
      expect(st.json.upstream.clockSkewSeconds).toBeGreaterThan(2_000_000_000);
      expect(st.json.upstream.lagSeconds).not.toBeNull();
      expect(st.text).toMatch(/Clock: +the workspace's clock is \d+ s ahead of this machine's, beyond the 300 s tolerance/);

      // Later ordinary events still arrive while the Date stays in 2100.
      const later = await m.edit('tickets', z!);
      const r2 = await m.run();
      expect(r2.code, r2.stderr).toBe(0);
      expect(skewWarnings(r2.stderr)).toHaveLength(1);
      expect(
        await m.read(
          async (s) => (await databaseOf(s).selectFrom('tickets').select('subject').where('id', '=', z!).executeTakeFirst())?.subject,
        ),
      ).toBe(later);
      await settles(m);
    }, 60_000);

    it('a Date of 1970 on every answer: ordinary events sync, none is quarantined as ahead', async () => {
      const before = (await m.quarantined('event')).length;
      m.hostile.faults.date = DATE_1970;
      const [, , , a, b] = m.ticketIds();
      const subject = await m.edit('tickets', a!);
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      expect(skewWarnings(r.stderr)).toHaveLength(1);
      expect((await m.quarantined('event')).length).toBe(before);
      expect(await m.read(readReadFloor)).toBeNull();
      expect(
        await m.read(
          async (s) => (await databaseOf(s).selectFrom('tickets').select('subject').where('id', '=', a!).executeTakeFirst())?.subject,
        ),
      ).toBe(subject);
      const st = await status(m);
      expect(st.json.upstream.clockSkewSeconds).toBeLessThan(-1_000_000_000);
      expect(st.json.upstream.lagSeconds).not.toBeNull();
      expect(st.text).toMatch(/Clock: +the workspace's clock is \d+ s behind this machine's, beyond the 300 s tolerance/);
      // Under the 1970 Date nothing is lost either: the next change arrives too.
      const next = await m.edit('tickets', b!);
      expect((await m.run()).code).toBe(0);
      expect(
        await m.read(
          async (s) => (await databaseOf(s).selectFrom('tickets').select('subject').where('id', '=', b!).executeTakeFirst())?.subject,
        ),
      ).toBe(next);
      expect(await m.diff()).toEqual([]);
      await settles(m);
    }, 60_000);

    it('events stamped by a clock a day ahead, as its Date says: exit 4 naming the clock, watermark unchanged, never exit 0 with everything quarantined', async () => {
      const DAY = 86_400_000;
      const ahead = new Date(Date.now() + DAY);
      m.hostile.faults.date = ahead.toUTCString();
      // The upstream's clock stamps its events: every event of the log a day later than the truth.
      m.hostile.faults.rewrite = {
        events: (events) => {
          for (const e of events) e.occurredAt = new Date(Date.parse(String(e.occurredAt)) + DAY).toISOString();
        },
      };
      const before = await m.read(readWatermark);
      const quarantinedBefore = (await m.quarantined('event')).length;
      await m.edit('tickets', m.ticketIds()[7]!);
      const r = await m.run();
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(
        /The workspace's clock \(its Date header .*\) is \d+ s ahead of the local clock, beyond the 300 s tolerance/,
      );
      expect(await m.read(readWatermark)).toBe(before);
      expect((await m.quarantined('event')).length).toBe(quarantinedBefore);
      await settles(m);
    }, 60_000);
  });
}
