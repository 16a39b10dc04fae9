import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/index.js';
import { startSimulator, type MultiSimulator, type SimulatorWorkspace } from '../../src/simulator/index.js';
import { START, type Wire } from './helpers.js';

let sim: MultiSimulator;
let a: SimulatorWorkspace;
let b: SimulatorWorkspace;

beforeAll(async () => {
  sim = await startSimulator({
    startTime: START,
    realTime: false,
    control: true,
    tickets: 6,
    deals: 3,
    workspaces: [
      {
        id: 'acme',
        apiKey: 'acme-key',
        seed: 11,
        dialect: { timestamps: 's-offset' },
        faults: { rateLimitPerSecond: 0.01, rateLimitBurst: 2 },
      },
      { id: 'globex', seed: 12, tickets: 9 },
      { id: 'idle' },
    ],
  });
  a = sim.workspace('acme');
  b = sim.workspace('globex');
});
afterAll(() => sim.close());

async function get(baseUrl: string, path: string, key: string | null): Promise<{ status: number; body: Wire; headers: Headers }> {
  const res = await fetch(`${baseUrl}${path}`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

const ids = (list: object[]) => list.map((r) => (r as { id: string }).id);

describe('a simulator serving many workspaces', () => {
  it('names each workspace by its path prefix, with its own key (key-<id> when none is given)', () => {
    expect(a.baseUrl).toBe(`${sim.url}/w/acme`);
    expect(a.apiKey).toBe('acme-key');
    expect(b.apiKey).toBe('key-globex');
    expect(sim.workspaces.map((w) => w.id)).toEqual(['acme', 'globex', 'idle']);
    expect(() => sim.workspace('nope')).toThrow(/acme, globex, idle/);
  });

  it('generates a workspace only when it is first used', async () => {
    const idle = sim.workspace('idle');
    expect(idle.generated).toBe(false);
    const listed = await get(sim.url, '/_control/workspaces', null);
    expect(listed.body.workspaces.find((w: Wire) => w.id === 'idle')).toEqual({ id: 'idle', path: '/w/idle', generated: false });
    expect((await get(idle.baseUrl, '/api/v1/pipelines', idle.apiKey)).status).toBe(200);
    expect(idle.generated).toBe(true);
  });

  it('gives each workspace its own seeded data', async () => {
    const ta = a.control.truth();
    const tb = b.control.truth();
    expect(ta.tickets).toHaveLength(6);
    expect(tb.tickets).toHaveLength(9);
    expect(ids(ta.tickets)).not.toEqual(ids(tb.tickets).slice(0, 6));
    const served = await get(b.baseUrl, '/api/v1/tickets?limit=100', b.apiKey);
    expect(served.status).toBe(200);
    expect(ids(served.body.tickets).sort()).toEqual(ids(tb.tickets).sort());
  });

  it('answers 401 to one workspace key on another workspace path, and 404 outside every workspace', async () => {
    expect((await get(b.baseUrl, '/api/v1/pipelines', b.apiKey)).status).toBe(200);
    const crossed = await get(b.baseUrl, '/api/v1/pipelines', a.apiKey);
    expect(crossed.status).toBe(401);
    expect(crossed.body.error.code).toBe('unauthorized');
    expect((await get(a.baseUrl, '/api/v1/tickets', b.apiKey)).status).toBe(401);
    const root = await get(sim.url, '/api/v1/tickets', a.apiKey);
    expect(root.status).toBe(404);
    expect(root.body.error.message).toContain('/w/<id>/api/v1');
    expect((await get(`${sim.url}/w/nope`, '/api/v1/tickets', a.apiKey)).status).toBe(404);
  });

  it('keeps each workspace dialect apart', async () => {
    const ta = await get(a.baseUrl, '/api/v1/tickets?limit=1', a.apiKey);
    const tb = await get(b.baseUrl, '/api/v1/tickets?limit=1', b.apiKey);
    expect(ta.body.tickets[0].updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    expect(tb.body.tickets[0].updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(a.control.dialect().timestamps).toBe('s-offset');
    expect(b.control.dialect().timestamps).toBe('ms-z');
  });

  it('rations each workspace by its own token bucket', async () => {
    a.control.clearFaults();
    a.control.setFaults({ rateLimitPerSecond: 0.01, rateLimitBurst: 2 });
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) seen.push((await get(a.baseUrl, '/api/v1/pipelines', a.apiKey)).status);
    expect(seen).toEqual([200, 200, 429]);
    const other = await get(b.baseUrl, '/api/v1/pipelines', b.apiKey);
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-limit')).toBeNull();
    a.control.clearFaults();
  });

  it('keeps change logs, clocks and request logs apart', async () => {
    const beforeA = a.control.truth().events.length;
    const beforeB = b.control.truth().events;
    const beforeNow = b.control.now().getTime();
    a.control.clearRequests();
    b.control.clearRequests();
    const writes = a.control.act(5);
    a.control.advanceClock(60_000);
    const afterA = a.control.truth().events as { id: string; entityId: string }[];
    const fresh = afterA.slice(0, afterA.length - beforeA);
    expect(fresh.length).toBeGreaterThanOrEqual(5);
    for (const w of writes) expect(fresh.map((e) => e.entityId)).toContain(w.entityId);
    const servedA = await get(a.baseUrl, '/api/v1/events?limit=100', a.apiKey);
    expect(ids(servedA.body.events).slice(0, fresh.length)).toEqual(ids(fresh));
    const servedB = await get(b.baseUrl, '/api/v1/events?limit=100', b.apiKey);
    expect(ids(servedB.body.events)).toEqual(ids(beforeB).slice(0, 100));
    expect(b.control.truth().events).toEqual(beforeB);
    expect(b.control.now().getTime()).toBe(beforeNow);
    expect(a.control.now().getTime()).toBe(START.getTime() + 60_000);
    expect(a.control.requests().map((r) => r.path)).toEqual(['/api/v1/events']);
    expect(b.control.requests().map((r) => r.path)).toEqual(['/api/v1/events']);
  });

  it('serves each workspace control surface under its prefix', async () => {
    const clock = await get(a.baseUrl, '/_control/clock', null);
    expect(clock.status).toBe(200);
    expect(clock.body.now).toBe(a.control.now().toISOString());
    expect((await get(b.baseUrl, '/_control/clock', null)).body.now).toBe(b.control.now().toISOString());
  });

  it('rejects a bad workspace option when it starts, naming it', async () => {
    await expect(startSimulator({ workspaces: [{ id: 'a/b' }] })).rejects.toThrow(/workspace id "a\/b"/);
    await expect(startSimulator({ workspaces: [{ id: 'x' }, { id: 'x' }] })).rejects.toThrow(/"x" is given twice/);
    await expect(startSimulator({ workspaces: [{ id: 'x', dialect: { listEnd: 'never' as 'null' } }] })).rejects.toThrow(/listEnd/);
  });
});

describe('live activity across workspaces', () => {
  it('writes in each generated workspace at its own rate, on one timer, and not in a workspace nobody used', async () => {
    const live = await startSimulator({
      startTime: START,
      tickets: 4,
      deals: 2,
      workspaces: [{ id: 'busy', activity: 40 }, { id: 'still' }, { id: 'unused', activity: 40 }],
    });
    try {
      const busy = live.workspace('busy');
      const still = live.workspace('still');
      const before = busy.control.truth().events.length;
      const stillBefore = still.control.truth().events;
      // Keyed to progress: wait for busy's change log to grow by ten writes' worth.
      for (let i = 0; i < 400 && busy.control.truth().events.length < before + 10; i++) await new Promise((r) => setTimeout(r, 25));
      expect(busy.control.truth().events.length).toBeGreaterThanOrEqual(before + 10);
      expect(still.control.truth().events).toEqual(stillBefore);
      expect(live.workspace('unused').generated).toBe(false);
    } finally {
      await live.close();
    }
  });
});

describe("wsmirror's API client against a workspace's base address", () => {
  it('reads each workspace whole through its /w/<id> prefix', async () => {
    for (const ws of [a, b]) {
      const client = createApiClient({
        baseUrl: ws.baseUrl,
        apiKey: ws.apiKey,
        maxRequestsPerSecond: 500,
        retry: { minDelayMs: 5, maxDelayMs: 50 },
      });
      try {
        ws.control.clearFaults();
        const got: string[] = [];
        for await (const page of client.iterateTickets()) got.push(...page.items.map((t) => t.id));
        expect(got.sort()).toEqual(ids(ws.control.truth().tickets).sort());
      } finally {
        await client.close();
      }
    }
  });
});
