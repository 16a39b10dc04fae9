import { describe, expect, it } from 'vitest';
import { byHand } from '../helpers/by-hand.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { useBackfilledMirror, useSimulator } from './env.js';

interface Row {
  [column: string]: unknown;
}

const PAGE_SIZE = 4;

/**
 * Issue 49, "resync without a full refresh": `wsmirror resync` and `wsmirror backfill --since`
 * through the real CLI against the simulator, from an empty mirror through its backfill, on each
 * dialect; then both again while a `run` daemon holds the mirror, served through its inbox.
 * Truth is the simulator's own state and the requests it saw, never wsmirror's answer.
 */
for (const dialect of dialects) {
  describe(`resync and backfill --since (${dialect.name})`, () => {
    const sim = useSimulator({ seed: 49, tickets: 30, deals: 12, autoCloseSolvedAfterMs: 0 });
    const mirror = useBackfilledMirror(dialect, sim, { pageSize: PAGE_SIZE });

    const rows = async (sql: string, params: unknown[] = []) => (await byHand(dialect, mirror.database, sql, params)) as Row[];
    const one = async (sql: string, params: unknown[] = []) => {
      const [row] = await rows(sql, params);
      expect(row, `no row for ${sql}`).toBeDefined();
      return row!;
    };
    const truthTickets = () => sim.control.truth().tickets as Array<{ id: string; priority: string; subject: string; updatedAt: string }>;
    const truthDeals = () => sim.control.truth().deals as Array<{ id: string; name: string; updatedAt: string }>;
    /** A write through the workspace's public API (it logs its event, which no sync reads here). */
    const patch = async (path: string, body: object) => {
      const res = await fetch(`${sim.url}/api/v1/${path}`, {
        method: 'PATCH',
        headers: { authorization: 'Bearer test-key', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.text()).toBe(200);
      const id = path.split('/')[1];
      const now = [...truthTickets(), ...truthDeals()].find((r) => r.id === id)!;
      return { updatedAt: now.updatedAt };
    };
    const otherPriority = (p: string) => (p === 'urgent' ? 'low' : 'urgent');
    /** A stored timestamp as an instant: text in the stored UTC form (SQLite), a Date (the pg driver's own parsing). */
    const stored = (ts: unknown) => (ts instanceof Date ? ts.getTime() : Date.parse(`${String(ts).replace(' ', 'T')}Z`));

    it('resync repairs an upstream change, a hand edit, a deletion and a bad record, and refuses an unknown id', async () => {
      const [a, b, c] = truthTickets().slice(3, 6);
      const deal = truthDeals()[2]!;
      // A: changed upstream after the last sync (its event is never read here).
      const changed = await patch(`tickets/${a!.id}`, { priority: otherPriority(a!.priority) });
      // B: edited by hand in the mirror, and one of its messages deleted by hand.
      await byHand(dialect, mirror.database, `UPDATE tickets SET subject = 'edited by hand' WHERE id = $1`, [b!.id]);
      const message = await one('SELECT id FROM ticket_messages WHERE ticket_id = $1 ORDER BY id LIMIT 1', [b!.id]);
      await byHand(dialect, mirror.database, 'DELETE FROM ticket_messages WHERE id = $1', [message.id]);
      // C: deleted upstream. The deal: its copy upstream no longer validates.
      sim.control.hideTicket(c!.id, 'deleted');
      sim.control.corrupt('deal', deal.id, 'wrong-type');
      const historyBefore = await rows('SELECT * FROM ticket_history ORDER BY ticket_id, changed_at, field');

      const r = await runCli(['resync', '--ticket', `${a!.id},${b!.id}`, '--ticket', c!.id, '--deal', deal.id], mirror.env);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trim().split('\n');
      expect(lines).toHaveLength(4);
      expect(lines[0]).toMatch(new RegExp(`^ticket ${a!.id}: updated \\(.*priority`));
      expect(lines[1]).toMatch(new RegExp(`^ticket ${b!.id}: updated \\(subject, ticket_messages\\)$`));
      expect(lines[2]).toMatch(new RegExp(`^ticket ${c!.id}: deleted`));
      expect(lines[3]).toMatch(new RegExp(`^deal ${deal.id}: quarantined \\(.+\\)`));

      const truthA = truthTickets().find((t) => t.id === a!.id)!;
      const mirrorA = await one('SELECT priority, updated_at FROM tickets WHERE id = $1', [a!.id]);
      expect(mirrorA.priority).toBe(truthA.priority);
      expect(stored(mirrorA.updated_at)).toBe(Date.parse(changed.updatedAt));
      // The change no event told yet is observed against the stored copy, and no older row is lost.
      const observed = await rows(`SELECT * FROM ticket_history WHERE ticket_id = $1 AND field = 'priority' AND source = 'observed'`, [
        a!.id,
      ]);
      expect(observed.map((h) => [h.from_value, h.to_value])).toEqual([[a!.priority, truthA.priority]]);
      const historyAfter = await rows('SELECT * FROM ticket_history ORDER BY ticket_id, changed_at, field');
      for (const h of historyBefore) expect(historyAfter).toContainEqual(h);
      expect((await one('SELECT subject FROM tickets WHERE id = $1', [b!.id])).subject).toBe(b!.subject);
      expect(await rows('SELECT id FROM ticket_messages WHERE id = $1', [message.id])).toHaveLength(1);
      expect((await one('SELECT deleted_at FROM tickets WHERE id = $1', [c!.id])).deleted_at).not.toBeNull();
      expect(await rows(`SELECT reason FROM quarantine WHERE entity_type = 'deal' AND entity_id = $1`, [deal.id])).toHaveLength(1);
      const run = await one(`SELECT outcome, records_fetched FROM sync_runs WHERE kind = 'resync' ORDER BY id DESC LIMIT 1`);
      expect(run).toMatchObject({ outcome: 'success', records_fetched: 4 });

      // Again: nothing left to change; the repaired deal leaves the quarantine.
      sim.control.repair('deal', deal.id);
      const again = await runCli(['resync', '--ticket', b!.id, '--deal', deal.id], mirror.env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(`ticket ${b!.id}: unchanged`);
      expect(again.stdout).toMatch(new RegExp(`deal ${deal.id}: (updated|unchanged)`));
      expect(await rows(`SELECT reason FROM quarantine WHERE entity_type = 'deal' AND entity_id = $1`, [deal.id])).toHaveLength(0);
    });

    it('resync names an unknown or malformed id and exits 2', async () => {
      const unknown = await runCli(['resync', '--ticket', 'tkt_no_such_one'], mirror.env);
      expect(unknown.code).toBe(2);
      expect(unknown.stdout).toContain('ticket tkt_no_such_one: not found');
      expect(unknown.stderr).toMatch(/^wsmirror: No such record: .*ticket tkt_no_such_one/);
      const bad = await runCli(['resync', '--deal', 'a/b'], mirror.env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--deal "a\/b" is not a record id/);
      const none = await runCli(['resync'], mirror.env);
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/--ticket <id>/);
      const date = await runCli(['backfill', '--since', '2026-02-30'], mirror.env);
      expect(date.code).toBe(2);
      expect(date.stderr).toMatch(/--since "2026-02-30" is not a date \(day 30 does not exist/);
    });

    it('resync exits 3 on a rejected key and 4 on an unreachable upstream before writing, and 4 when the read fails', async () => {
      const ticket = truthTickets()[6]!;
      const requests = async () => (await rows('SELECT count(*) AS n FROM writer_requests'))[0]!.n;
      const before = await requests();
      const rejected = await runCli(['resync', '--ticket', ticket.id], { ...mirror.env, WSMIRROR_API_KEY: 'wrong-key' });
      expect(rejected.code, rejected.stderr).toBe(3);
      const down = await runCli(['resync', '--ticket', ticket.id], { ...mirror.env, WSMIRROR_BASE_URL: 'http://127.0.0.1:9' });
      expect(down.code, down.stderr).toBe(4);
      expect(down.stderr).toMatch(/^wsmirror: The workspace is unavailable/m);
      expect(await requests()).toEqual(before);

      // Every attempt at this one record fails while the workspace answers the rest.
      sim.control.failNext({ status: 500, count: 100, path: `/api/v1/tickets/${ticket.id}` });
      try {
        const failed = await runCli(['resync', '--ticket', ticket.id], mirror.env);
        expect(failed.code, failed.stderr).toBe(4);
        expect(failed.stdout).toContain(`ticket ${ticket.id}: not read (its read failed while the workspace answered others`);
        expect(await rows(`SELECT failed_reads FROM dirty WHERE entity_id = $1`, [ticket.id])).toEqual([{ failed_reads: 1 }]);
      } finally {
        sim.control.clearFaults();
      }
      const retried = await runCli(['resync', '--ticket', ticket.id], mirror.env);
      expect(retried.stdout.trim()).toBe(`ticket ${ticket.id}: unchanged`);
      expect(await rows(`SELECT * FROM dirty`)).toEqual([]);
    });

    it('verify --repair exits 5 naming a record whose read failed, and 0 once it is mended', async () => {
      const ticket = truthTickets()[7]!;
      await byHand(dialect, mirror.database, `UPDATE tickets SET subject = 'edited by hand' WHERE id = $1`, [ticket.id]);
      sim.control.failNext({ status: 500, count: 100, path: `/api/v1/tickets/${ticket.id}` });
      try {
        const failed = await runCli(['verify', '--repair'], mirror.env);
        expect(failed.code, failed.stdout + failed.stderr).toBe(5);
        expect(failed.stdout).toContain(`ticket ${ticket.id}: content (subject`);
        expect(failed.stdout).toMatch(/^Repaired: 1 record\(s\) marked, \d+ re-read; 1 not mended\.$/m);
        expect(failed.stdout).toContain(`  - ticket ${ticket.id}: pending`);
        expect(failed.stderr).toMatch(/^wsmirror: 1 record\(s\) still differ after the repair/m);
      } finally {
        sim.control.clearFaults();
      }
      const mended = await runCli(['verify', '--repair'], mirror.env);
      expect(mended.code, mended.stdout + mended.stderr).toBe(0);
      expect(mended.stdout).toMatch(/; 0 not mended\.$/m);
      expect((await one('SELECT subject FROM tickets WHERE id = $1', [ticket.id])).subject).toBe(ticket.subject);
      expect(await rows('SELECT * FROM dirty')).toEqual([]);
      expect(await rows(`SELECT kind, outcome FROM writer_requests ORDER BY id DESC LIMIT 2`)).toEqual([
        { kind: 'verify', outcome: 'done' },
        { kind: 'verify', outcome: 'done' },
      ]);
    });

    it('backfill --since re-reads only what changed since the date, keeping the watermark and the history', async () => {
      sim.control.advanceClock(1000);
      const since = sim.control.now().toISOString();
      sim.control.advanceClock(1000);
      const live = truthTickets();
      const [x, y] = live.slice(8, 10);
      const old = live.at(-1)!;
      await patch(`tickets/${x!.id}`, { priority: otherPriority(x!.priority) });
      await patch(`tickets/${y!.id}`, { subject: 'changed upstream' });
      const deal = truthDeals().at(-1)!;
      await patch(`deals/${deal.id}`, { name: 'renamed upstream' });
      // Older than the date: a backfill --since must not look at it.
      await byHand(dialect, mirror.database, `UPDATE tickets SET subject = 'old hand edit' WHERE id = $1`, [old.id]);
      const watermark = await one(`SELECT value_json FROM sync_state WHERE key = 'watermark'`);
      const events = await one('SELECT count(*) AS n FROM events');
      const historyBefore = await rows('SELECT * FROM ticket_history ORDER BY ticket_id, changed_at, field');
      const changedTickets = truthTickets().filter((t) => Date.parse(t.updatedAt) >= Date.parse(since));
      const changedDeals = truthDeals().filter((d) => Date.parse(d.updatedAt) >= Date.parse(since));
      // The simulator's automations are off: only these three writes happened since the date.
      expect(changedTickets.map((t) => t.id).sort()).toEqual([x!.id, y!.id].sort());
      expect(changedDeals.map((d) => d.id)).toEqual([deal.id]);
      sim.control.clearRequests();

      const r = await runCli(['backfill', '--since', since, '--json'], mirror.env);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { listed: number; differed: number; unchanged: number; reread: number };
      expect(out, r.stdout).toMatchObject({ listed: 3, differed: 3, unchanged: 0, reread: 3 });

      const seen = sim.control.requests().filter((q) => q.method === 'GET');
      const reads = (list: string) => seen.filter((q) => q.path.startsWith(`/api/v1/${list}/`)).map((q) => q.path.split('/').at(-1));
      expect(reads('tickets').sort()).toEqual(changedTickets.map((t) => t.id).sort());
      for (const id of reads('deals')) expect(changedDeals.map((d) => d.id)).toContain(id);
      // The ticket list stops at the first page that reaches before the date: one page here, of eight.
      expect(seen.filter((q) => q.path === '/api/v1/tickets')).toHaveLength(Math.floor(changedTickets.length / PAGE_SIZE) + 1);
      // The change log is not read (only the key's probe, one event): the watermark is not this command's.
      expect(seen.filter((q) => q.path === '/api/v1/events').map((q) => q.query.limit)).toEqual(['1']);

      for (const t of changedTickets) {
        const mine = await one('SELECT subject, priority, updated_at FROM tickets WHERE id = $1', [t.id]);
        expect({ subject: mine.subject, priority: mine.priority, at: stored(mine.updated_at) }).toEqual({
          subject: t.subject,
          priority: t.priority,
          at: Date.parse(t.updatedAt),
        });
      }
      expect((await one('SELECT name FROM deals WHERE id = $1', [deal.id])).name).toBe('renamed upstream');
      expect((await one('SELECT subject FROM tickets WHERE id = $1', [old.id])).subject).toBe('old hand edit');
      expect(await one(`SELECT value_json FROM sync_state WHERE key = 'watermark'`)).toEqual(watermark);
      expect(await one('SELECT count(*) AS n FROM events')).toEqual(events);
      const historyAfter = await rows('SELECT * FROM ticket_history ORDER BY ticket_id, changed_at, field');
      for (const h of historyBefore) expect(historyAfter).toContainEqual(h);
      expect(
        await rows(`SELECT * FROM ticket_history WHERE ticket_id = $1 AND field = 'priority' AND source = 'observed'`, [x!.id]),
      ).toHaveLength(1);
      expect(await one(`SELECT outcome FROM sync_runs WHERE kind = 'backfill-since' ORDER BY id DESC LIMIT 1`)).toEqual({
        outcome: 'success',
      });

      // Cheap to rerun: the same pages, no record read again.
      sim.control.clearRequests();
      const rerun = await runCli(['backfill', '--since', since], mirror.env);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(rerun.stdout).toMatch(/3 listed \(\d+ pages\), 0 differed, 0 re-read, 3 unchanged/);
      expect(sim.control.requests().filter((q) => /^\/api\/v1\/(tickets|deals)\/./.test(q.path))).toHaveLength(0);
      // The next sync reads the events of those writes and agrees with what the repair wrote.
      expect((await runCli(['sync'], mirror.env)).code).toBe(0);
      expect((await runCli(['verify'], mirror.env)).code).toBe(5); // the old hand edit, which --since left alone
    });

    it('both are served through the inbox while `run` holds the mirror', async () => {
      const daemon = spawnCli(['run'], { ...mirror.env, WSMIRROR_LOG_LEVEL: 'info' });
      let log = '';
      daemon.stderr.on('data', (d: Buffer) => (log += d.toString()));
      try {
        await waitForOutput(daemon, /"msg":"sync cycle"/);
        const ticket = truthTickets()[12]!;
        await byHand(dialect, mirror.database, `UPDATE tickets SET subject = 'edited by hand' WHERE id = $1`, [ticket.id]);
        const r = await runCli(['resync', '--ticket', ticket.id, '--wait', '120'], mirror.env);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/another process holds the mirror; queued as writer request \d+/);
        expect(r.stdout.trim()).toBe(`ticket ${ticket.id}: updated (subject)`);

        // A change upstream the daemon syncs (keyed to its committed row), then a hand edit of it.
        sim.control.advanceClock(1000);
        const since = sim.control.now().toISOString();
        const target = truthTickets()[14]!;
        const changed = await patch(`tickets/${target.id}`, { subject: 'changed while running' });
        for (let i = 0; ; i++) {
          const mine = await one('SELECT updated_at FROM tickets WHERE id = $1', [target.id]);
          if (stored(mine.updated_at) === Date.parse(changed.updatedAt)) break;
          expect(i, 'the daemon did not sync the change').toBeLessThan(600);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await byHand(dialect, mirror.database, `UPDATE tickets SET subject = 'edited by hand' WHERE id = $1`, [target.id]);
        const b = await runCli(['backfill', '--since', since, '--wait', '120'], mirror.env);
        expect(b.code, b.stderr).toBe(0);
        expect(b.stdout).toMatch(/1 listed \(\d+ pages\), 1 differed, 1 re-read, 0 unchanged/);
        expect((await one('SELECT subject FROM tickets WHERE id = $1', [target.id])).subject).toBe('changed while running');
        // --wait 0 queues and returns; the daemon serves the request at its next cycle all the same.
        const queued = await runCli(['resync', '--deal', truthDeals()[0]!.id, '--wait', '0'], mirror.env);
        expect(queued.code, queued.stderr).toBe(0);
        const id = Number(/Queued as writer request (\d+)/.exec(queued.stdout)?.[1]);
        for (let i = 0; (await rows('SELECT outcome FROM writer_requests WHERE id = $1', [id]))[0]!.outcome === null; i++) {
          expect(i, 'the daemon did not serve the queued request').toBeLessThan(600);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const served = await rows(`SELECT kind, outcome FROM writer_requests ORDER BY id DESC LIMIT 3`);
        expect(served).toEqual([
          { kind: 'resync', outcome: 'done' },
          { kind: 'backfill-since', outcome: 'done' },
          { kind: 'resync', outcome: 'done' },
        ]);
      } finally {
        daemon.kill('SIGTERM');
      }
      expect((await daemon.result).code).toBe(0);
      expect(log.match(/"msg":"served a queued writer request"/g)).toHaveLength(3);
    });
  });
}
