import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Client, type Wire } from './helpers.js';

let c: Client;
let pipeline: Wire;
beforeAll(async () => {
  c = await start({ tickets: 5, deals: 30, pipelines: 3, seed: 11 });
  pipeline = (await c.get('/api/v1/pipelines')).body.pipelines[1];
});
afterAll(() => c.sim.close());

describe('pipelines', () => {
  it('stages in order, won and lost stages, dealCount matches the deals', async () => {
    const { pipelines } = (await c.get('/api/v1/pipelines')).body;
    expect(pipelines).toHaveLength(3);
    const deals = c.sim.control.truth().deals as Wire[];
    for (const p of pipelines) {
      expect(p.stages.length).toBeGreaterThanOrEqual(4);
      expect(p.stages.length).toBeLessThanOrEqual(7);
      expect(p.stages.map((s: Wire) => s.position)).toEqual(p.stages.map((_: unknown, i: number) => i));
      expect(p.stages.filter((s: Wire) => s.isWon)).toHaveLength(1);
      expect(p.stages.filter((s: Wire) => s.isLost)).toHaveLength(1);
      expect(p.dealCount).toBe(deals.filter((d) => d.pipeline.id === p.id).length);
    }
  });
});

describe('deals', () => {
  it('status is derived from the stage flags', async () => {
    const deals = await c.pageAll('/api/v1/deals?limit=100', 'deals');
    for (const d of deals) expect(d.status).toBe(d.stage.isWon ? 'won' : d.stage.isLost ? 'lost' : 'open');
    const won = (await c.get('/api/v1/deals?status=won&limit=100')).body.deals;
    expect(won.length).toBe(deals.filter((d) => d.status === 'won').length);
  });

  it('create defaults to the default pipeline and its first stage; amounts keep two decimals', async () => {
    const r = await c.send('POST', '/api/v1/deals', { name: 'Big one', amount: 1234.5 });
    expect(r.status).toBe(201);
    const first = (await c.get('/api/v1/pipelines')).body.pipelines[0];
    expect(r.body.deal).toMatchObject({
      name: 'Big one',
      amount: '1234.50',
      currency: 'USD',
      status: 'open',
      pipeline: { id: first.id },
      stage: { id: first.stages[0].id },
    });
    const s = await c.send('POST', '/api/v1/deals', { name: 'Str', amount: '99.9', closeDate: '2024-07-01', currency: 'eur' });
    expect(s.body.deal).toMatchObject({ amount: '99.90', closeDate: '2024-07-01', currency: 'EUR' });
    const n = await c.send('POST', '/api/v1/deals', { name: 'Null', amount: null });
    expect(n.body.deal.amount).toBeNull();
    expect((await c.get('/api/v1/events?limit=1')).body.events[0]).toMatchObject({ type: 'deal.created', entityId: n.body.deal.id });
  });

  it('create with a stage by name and linked contacts (first is primary)', async () => {
    const contacts = (c.sim.control.truth().tickets as Wire[]).slice(0, 2).map((t) => t.contact.id);
    const won = pipeline.stages.find((s: Wire) => s.isWon);
    const r = await c.send('POST', '/api/v1/deals', { name: 'Named', pipelineId: pipeline.id, stage: won.name, contactIds: contacts });
    expect(r.status).toBe(201);
    expect(r.body.deal).toMatchObject({ status: 'won', stage: { id: won.id } });
    expect(r.body.deal.contacts.map((x: Wire) => x.isPrimary)).toEqual(contacts.length === 2 ? [true, false] : [true]);
  });

  it.each([
    [{ name: 'x', stage: 'No such stage' }, 'stage'],
    [{ name: 'x', companyId: 'comp_nope' }, 'companyId'],
    [{ name: 'x', contactIds: ['con_nope'] }, 'contactIds'],
    [{ name: 'x', ownerId: 'usr_nope' }, 'ownerId'],
    [{ name: 'x', amount: '10.123' }, 'amount'],
    [{ name: 'x', amount: 'ten' }, 'amount'],
    [{ name: 'x', amount: 1.005 }, 'amount'],
    [{ name: 'x', closeDate: '2024-02-30' }, 'closeDate'],
    [{ name: 'x', fields: { color: 'red' } }, 'fields.color'],
    [{ amount: 5 }, 'name'],
  ])('create refuses %j with 422 naming %s', async (body, field) => {
    const r = await c.send('POST', '/api/v1/deals', body);
    expect(r.status).toBe(422);
    expect(r.body.error.details.map((d: Wire) => d.field)).toContain(field);
  });

  it('PATCH: stage moves must stay in the pipeline; events carry from/to', async () => {
    const d = (await c.send('POST', '/api/v1/deals', { name: 'Mover', pipelineId: pipeline.id, amount: 10 })).body.deal;
    const foreign = (await c.get('/api/v1/pipelines')).body.pipelines[0].stages[1].id;
    expect((await c.send('PATCH', `/api/v1/deals/${d.id}`, { stage: foreign })).status).toBe(422);
    const lost = pipeline.stages.find((s: Wire) => s.isLost);
    const r = await c.send('PATCH', `/api/v1/deals/${d.id}`, { stage: lost.id, amount: '12.34' });
    expect(r.status).toBe(200);
    expect(r.body.deal).toMatchObject({ status: 'lost', amount: '12.34' });
    const events = (await c.get(`/api/v1/events?entityType=deal&entityId=${d.id}&limit=5`)).body.events;
    const byType = Object.fromEntries(events.map((e: Wire) => [e.type, e.payload]));
    expect(byType['deal.stage_changed']).toEqual({ from: d.stage.id, to: lost.id });
    expect(byType['deal.updated']).toEqual({ amount: { from: '10.00', to: '12.34' } });
    expect((await c.send('PATCH', '/api/v1/deals/deal_nope', { name: 'y' })).status).toBe(404);
  });

  it('DELETE answers {deleted:true}, then 404, and logs deal.deleted', async () => {
    const d = (await c.send('POST', '/api/v1/deals', { name: 'Doomed' })).body.deal;
    const r = await c.send('DELETE', `/api/v1/deals/${d.id}`);
    expect(r).toMatchObject({ status: 200, body: { deleted: true } });
    expect((await c.get(`/api/v1/deals/${d.id}`)).status).toBe(404);
    expect((await c.send('DELETE', `/api/v1/deals/${d.id}`)).status).toBe(404);
    expect((await c.get('/api/v1/events?type=deal.&limit=1')).body.events[0]).toMatchObject({ type: 'deal.deleted', entityId: d.id });
    expect(c.sim.control.truth().deletedDealIds).toContain(d.id);
  });
});
