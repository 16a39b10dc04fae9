import { describe, expect, it } from 'vitest';
import { randomDialect, SIMULATOR_DIALECTS, type DialectOptions } from '../../src/simulator/index.js';
import { canonical } from './dialect-helpers.js';
import { start, type Client, type Wire } from './helpers.js';

/** A small seeded generator for drawing dialects (xorshift32), kept apart from the simulator's own. */
function seeded(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

const ms = (v: string) => Date.parse(v);

function nonIncreasing(values: number[]): boolean {
  return values.every((v, i) => i === 0 || (values[i - 1] as number) >= v);
}

/** The simulator's documented guarantees, checked over HTTP against truth, whatever the dialect. */
async function checkGuarantees(c: Client): Promise<void> {
  c.sim.control.advanceClock(1500);
  c.sim.control.act(40);
  const truth = c.sim.control.truth();
  const ids = (xs: Wire[]) => xs.map((x) => x.id);

  // Every record and event exactly once over the pages, newest first.
  const tickets = await c.pageAll('/api/v1/tickets?limit=9', 'tickets');
  const deals = await c.pageAll('/api/v1/deals?limit=4', 'deals');
  const events = await c.pageAll('/api/v1/events?limit=33', 'events');
  expect(ids(tickets)).toEqual(ids(truth.tickets as Wire[]));
  expect(ids(deals)).toEqual(ids(truth.deals as Wire[]));
  expect(ids(events)).toEqual(ids(truth.events as Wire[]));
  expect(nonIncreasing(tickets.map((t) => ms(t.updatedAt)))).toBe(true);
  expect(nonIncreasing(deals.map((d) => ms(d.updatedAt)))).toBe(true);
  expect(nonIncreasing(events.map((e) => ms(e.occurredAt)))).toBe(true);

  // Truth is the canonical form of what is served.
  events.forEach((e, i) => expect(canonical('event', e)).toEqual((truth.events as Wire[])[i]));
  for (const t of (truth.tickets as Wire[]).slice(0, 12))
    expect(canonical('ticket', (await c.get(`/api/v1/tickets/${t.id}`)).body.ticket)).toEqual(t);
  for (const d of (truth.deals as Wire[]).slice(0, 8))
    expect(canonical('deal', (await c.get(`/api/v1/deals/${d.id}`)).body.deal)).toEqual(d);
  const pipelines = (await c.get('/api/v1/pipelines')).body.pipelines.map((p: Wire) => canonical('pipeline', p));
  expect(pipelines).toEqual(truth.pipelines);

  // A record's newest event shows its updatedAt; its newest status or stage change tells where it is.
  const changes = truth.changes as Wire[];
  for (const t of truth.tickets as Wire[]) {
    expect((truth.events as Wire[]).find((e) => e.entityId === t.id).occurredAt).toBe(t.updatedAt);
    const status = changes.find((x) => x.entityId === t.id && x.field === 'status');
    expect(status ? status.to : 'open').toBe(t.status);
  }
  for (const d of truth.deals as Wire[]) {
    expect((truth.events as Wire[]).find((e) => e.entityId === d.id).occurredAt).toBe(d.updatedAt);
    const stage = changes.find((x) => x.entityId === d.id && x.field === 'stageId');
    if (stage) expect(stage.to).toBe(d.stage.id);
  }

  // Inclusive since, on the shown value.
  for (const pivot of [events[2], events[30], events[events.length - 1]]) {
    const got = await c.pageAll(`/api/v1/events?limit=50&since=${encodeURIComponent(pivot.occurredAt)}`, 'events');
    expect(ids(got)).toEqual(ids(events.filter((e) => ms(e.occurredAt) >= ms(pivot.occurredAt))));
  }

  // Snapshot listing: writes between pages neither hide nor repeat a ticket. Paged by position, a
  // write moves its record to the front (it may be skipped, and its log event names it) and may
  // repeat another; every ticket no write touched is still listed.
  const first = ids(truth.tickets as Wire[]);
  const written = new Set<string>();
  const seen = await c.pageAll('/api/v1/tickets?limit=6', 'tickets', () => c.sim.control.act(3).forEach((a) => written.add(a.entityId)));
  const listed = ids(seen);
  if (truth.dialect.listPaging === 'keyset') expect(new Set(listed).size).toBe(listed.length);
  for (const id of first) if (truth.dialect.listPaging === 'keyset' || !written.has(id)) expect(listed).toContain(id);

  // Errors keep their codes.
  expect((await c.get('/api/v1/tickets/tkt_nope')).status).toBe(404);
  expect((await c.get('/api/v1/deals?limit=0')).status).toBe(422);
  expect((await c.get('/api/v1/events', null)).status).toBe(401);
  expect((await c.get('/api/v1/events?cursor=garbage')).status).toBe(400);
}

describe('the guarantees hold under every preset', () => {
  it.each(Object.entries(SIMULATOR_DIALECTS))('%s', async (_name, dialect) => {
    const c = await start({ tickets: 40, deals: 15, seed: 21, dialect });
    try {
      await checkGuarantees(c);
    } finally {
      await c.sim.close();
    }
  });
});

describe('the guarantees hold under random dialects', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('draw %i', async (seed) => {
    const dialect: DialectOptions = randomDialect(seeded(seed * 2654435761));
    const c = await start({ tickets: 30, deals: 10, seed, dialect });
    try {
      expect(c.sim.control.dialect()).toEqual(dialect);
      await checkGuarantees(c);
    } finally {
      await c.sim.close();
    }
  });

  it('randomDialect covers every value of every option', () => {
    const rng = seeded(99);
    const seen = new Map<string, Set<unknown>>();
    for (let i = 0; i < 200; i++) for (const [k, v] of Object.entries(randomDialect(rng))) seen.set(k, (seen.get(k) ?? new Set()).add(v));
    expect(Object.fromEntries([...seen].map(([k, v]) => [k, v.size]))).toEqual({
      changeEvents: 3,
      opaquePayload: 2,
      changeFieldNames: 3,
      changeValues: 2,
      timestamps: 4,
      listEnd: 3,
      extraFields: 2,
      unlistedValues: 2,
      teamShape: 2,
      listPaging: 2,
    });
  });
});
