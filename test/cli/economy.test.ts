import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';

const PAGE_SIZE = 10;
const LOOKBACK_S = 300;

/**
 * Request economy (docs/design.md §1, "frugal"), counted from the simulator's request log: a sync of E new events that
 * touch R distinct tickets and deals, with O already-mirrored events inside the lookback, makes at
 * most ceil((E + O) / pageSize) + 1 event requests, 1 pipelines request, and at most R requests to
 * re-read the records: reads by id and ticket and deal list pages together (docs/sync.md, "Drain").
 */
describe('request economy of a sync', () => {
  const sim = useSimulator({ seed: 21, tickets: 60, deals: 25 });

  it('stays within the event, record and pipelines budgets', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url, extra: { pageSize: PAGE_SIZE, lookbackSeconds: LOOKBACK_S } });
    expect((await runCli(['backfill'], env)).code).toBe(0);
    sim.control.act(30);
    expect((await runCli(['sync'], env)).code).toBe(0);

    const db = new Database(join(dir, 'mirror.sqlite'), { readonly: true });
    const mirrored = db.prepare('select id, occurred_at from events').all() as Array<{ id: string; occurred_at: string }>;
    const watermark = JSON.parse(
      (db.prepare("select value_json from sync_state where key = 'watermark'").get() as { value_json: string }).value_json,
    ) as string;
    db.close();
    const since = Date.parse(watermark) - LOOKBACK_S * 1000;

    sim.control.act(45);
    const mirroredIds = new Set(mirrored.map((e) => e.id));
    const unseen = (sim.control.truth().events as Array<{ id: string; entityType: string; entityId: string; occurredAt: string }>).filter(
      (e) => !mirroredIds.has(e.id),
    );
    const E = unseen.length;
    const O = mirrored.filter((e) => Date.parse(e.occurred_at) >= since).length;
    const R = new Set(
      unseen.filter((e) => e.entityType === 'ticket' || e.entityType === 'deal').map((e) => `${e.entityType}:${e.entityId}`),
    ).size;

    sim.control.clearRequests();
    const r = await runCli(['sync'], env);
    expect(r.code, r.stderr).toBe(0);
    const log = sim.control.requests();
    const eventRequests = log.filter((q) => q.path === '/api/v1/events').length;
    const recordPaths = log.filter((q) => /^\/api\/v1\/(tickets|deals)\/[^/]+$/.test(q.path)).map((q) => q.path);
    const pipelineRequests = log.filter((q) => q.path === '/api/v1/pipelines').length;

    expect(E).toBeGreaterThan(45);
    expect(R).toBeGreaterThan(10);
    expect(eventRequests).toBeLessThanOrEqual(Math.ceil((E + O) / PAGE_SIZE) + 1);
    const listPages = log.filter((q) => q.path === '/api/v1/tickets' || q.path === '/api/v1/deals').length;
    expect(recordPaths.length + listPages).toBeLessThanOrEqual(R);
    expect(new Set(recordPaths).size).toBe(recordPaths.length); // each record once
    expect(pipelineRequests).toBe(1);
    cleanup();
  });
});
