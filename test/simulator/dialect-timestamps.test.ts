import { describe, expect, it } from 'vitest';
import type { DialectOptions } from '../../src/simulator/index.js';
import { strings, tour } from './dialect-helpers.js';
import { start, type Wire } from './helpers.js';

const FORMS: Record<DialectOptions['timestamps'], RegExp> = {
  'ms-z': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
  's-z': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
  'ms-offset': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/,
  's-offset': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/,
};
const LOOKS_LIKE_TIME = /^\d{4}-\d\d-\d\dT/;
const TIMESTAMP_KEYS = [
  'createdAt',
  'updatedAt',
  'occurredAt',
  'statusChangedAt',
  'firstAgentReplyAt',
  'resolvedAt',
  'firstReplyDueAt',
  'resolveDueAt',
  'firstReplyBreachedAt',
  'resolveBreachedAt',
];

describe.each(Object.keys(FORMS) as DialectOptions['timestamps'][])('timestamps %s', (form) => {
  const seconds = form.startsWith('s-');

  it('every timestamp of every answer has the form, and no other field looks like one', async () => {
    // Extra fields too: whatever a workspace adds, its times would be in the same form.
    const c = await start({ tickets: 40, deals: 15, seed: 3, dialect: { timestamps: form, extraFields: true } });
    try {
      c.sim.control.advanceClock(1234); // a millisecond part that is not zero
      const seen = new Map<string, number>();
      for (const a of await tour(c)) {
        for (const { key, value } of strings(a.body)) {
          if (!LOOKS_LIKE_TIME.test(value)) continue;
          expect(value, `${a.what} ${key}`).toMatch(FORMS[form]);
          seen.set(key, (seen.get(key) ?? 0) + 1);
        }
      }
      // Every kind of timestamp the API has was seen, so none escaped the check above.
      for (const key of TIMESTAMP_KEYS) expect(seen.get(key) ?? 0, key).toBeGreaterThan(0);
    } finally {
      await c.sim.close();
    }
  });

  it('truth shows the same instants in the ms Z form; since=<shown occurredAt> returns that event', async () => {
    const c = await start({ tickets: 40, deals: 15, seed: 4, dialect: { timestamps: form } });
    try {
      c.sim.control.advanceClock(777);
      c.sim.control.act(30);
      const truth = c.sim.control.truth();
      const served = await c.pageAll('/api/v1/events?limit=100', 'events');
      const truthEvents = truth.events as Wire[];
      expect(served.map((e) => e.id)).toEqual(truthEvents.map((e) => e.id));
      served.forEach((e, i) => {
        const canon = truthEvents[i].occurredAt as string;
        expect(canon).toMatch(FORMS['ms-z']);
        expect(Date.parse(e.occurredAt)).toBe(Date.parse(canon));
        if (seconds) expect(canon.endsWith('.000Z')).toBe(true);
      });
      // Newest first by the shown instant.
      for (let i = 1; i < served.length; i++)
        expect(Date.parse(served[i - 1].occurredAt)).toBeGreaterThanOrEqual(Date.parse(served[i].occurredAt));
      // Inclusive since, compared with the shown instant, for events spread over the log.
      for (const pivot of [served[0], served[3], served[17], served[40], served[served.length - 1]]) {
        const got = await c.pageAll(`/api/v1/events?limit=100&since=${encodeURIComponent(pivot.occurredAt)}`, 'events');
        const want = served.filter((e) => Date.parse(e.occurredAt) >= Date.parse(pivot.occurredAt));
        expect(got.map((e) => e.id)).toContain(pivot.id);
        expect(got.map((e) => e.id)).toEqual(want.map((e) => e.id));
      }
      // A since inside a shown second leaves out the events shown at the start of that second.
      const t0 = served[5];
      const later = new Date(Date.parse(t0.occurredAt) + 1).toISOString();
      const got = await c.pageAll(`/api/v1/events?limit=100&since=${later}`, 'events');
      expect(got.every((e) => Date.parse(e.occurredAt) >= Date.parse(later))).toBe(true);
      // Records: their newest event shows their updatedAt, in both forms.
      for (const t of (truth.tickets as Wire[]).slice(0, 20)) {
        const newest = truthEvents.find((e) => e.entityId === t.id);
        expect(newest.occurredAt).toBe(t.updatedAt);
        const wire = (await c.get(`/api/v1/tickets/${t.id}`)).body.ticket;
        expect(Date.parse(wire.updatedAt)).toBe(Date.parse(t.updatedAt));
        expect(wire.updatedAt).toMatch(FORMS[form]);
      }
    } finally {
      await c.sim.close();
    }
  });
});

describe('timestamps under a second form', () => {
  it('several writes in one second: the listing stays newest first by the shown instant and each write is found by since', async () => {
    const c = await start({ tickets: 10, deals: 5, seed: 8, dialect: { timestamps: 's-z' } });
    try {
      const ids = (c.sim.control.truth().tickets as Wire[]).slice(0, 4).map((t) => t.id);
      // To 1 ms past the next whole second: the four writes below (10 ms apart) share that second.
      c.sim.control.advanceClock(1001 - (c.sim.control.now().getTime() % 1000));
      const shown: string[] = [];
      for (const id of ids) {
        c.sim.control.advanceClock(10);
        shown.push((await c.send('PATCH', `/api/v1/tickets/${id}`, { summary: `s ${id}` })).body.ticket.updatedAt);
      }
      expect(new Set(shown).size).toBe(1);
      const since = await c.pageAll(`/api/v1/events?since=${shown[0]}`, 'events');
      expect(since.map((e) => e.entityId).sort()).toEqual([...ids].sort());
      const listed = (await c.get('/api/v1/tickets?limit=4')).body.tickets.map((t: Wire) => t.id);
      // Within one shown second the order is the order of the (hidden) milliseconds: newest write first.
      expect(listed).toEqual([...ids].reverse());
    } finally {
      await c.sim.close();
    }
  });
});
