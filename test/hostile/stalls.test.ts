/**
 * Issue 31, stalls: a record whose read trickles (one byte per 100 ms, so no idle timeout ever
 * fires) is ended by the whole-request deadline, stays dirty while the rest of the drain commits,
 * and is quarantined after 3 failed reads in a row; an upstream that answers no record read at all
 * still fails the cycle (docs/sync.md, "Hostile upstream"). Small `requestTimeoutMs` and retry
 * settings keep each run to seconds. Through the real CLI and the hostile proxy, on every dialect.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliConfig } from '../cli/env.js';
import { dialects } from '../helpers/dialects.js';
import { diffMirror } from '../helpers/truth.js';
import { openStore } from '../../src/store/index.js';
import { measure } from './cli.js';
import { LOOKBACK_SECONDS, useHostileMirror, type HostileMirror } from './mirror.js';
import { databaseOf } from '../../src/store/internal.js';

/** The bound of one record read: 2 attempts of at most 500 ms, 50 ms between them. */
const FAST = { requestTimeoutMs: 500, retry: { maxAttempts: 2, maxDelayMs: 50 } };
const TRICKLE_MS = 100;

const failedReads = (m: HostileMirror, id: string) =>
  m.read(async (s) => {
    const row = await databaseOf(s).selectFrom('dirty').select('failed_reads').where('entity_id', '=', id).executeTakeFirst();
    return row === undefined ? null : Number(row.failed_reads);
  });
const subjectOf = (m: HostileMirror, id: string) =>
  m.read(async (s) => (await databaseOf(s).selectFrom('tickets').select('subject').where('id', '=', id).executeTakeFirst())?.subject);

for (const dialect of dialects) {
  describe(`hostile stalls (${dialect.name})`, () => {
    const m = useHostileMirror(dialect, 34, FAST);

    it('a ticket whose body trickles stays dirty while the rest commits, and is quarantined after 3 failed reads', async () => {
      const [x, ...others] = m.ticketIds();
      m.hostile.faults.trickle = { ids: [x!], intervalMs: TRICKLE_MS };
      for (let run = 1; run <= 3; run++) {
        await m.edit('tickets', x!);
        const y = others[run]!;
        const subject = await m.edit('tickets', y);
        const r = await m.run();
        expect(r.code, r.stderr).toBe(0);
        // Each attempt is cut by the whole-request deadline, not left to trickle for minutes.
        expect(r.stderr).toMatch(/"errorCode":"TIMEOUT"/);
        expect(r.elapsedMs).toBeLessThan(20_000);
        expect(await subjectOf(m, y)).toBe(subject);
        if (run < 3) {
          expect(await failedReads(m, x!)).toBe(run);
          expect(r.stderr).toMatch(/record read failed while the workspace answered others; it stays dirty/);
        }
      }
      expect(await failedReads(m, x!)).toBeNull();
      expect((await m.quarantined('ticket')).find((q) => q.entity_id === x)?.reason).toMatch(
        /its read failed while the workspace answered others: .*\(3 failed reads in a row\)/,
      );

      m.clearFaults();
      const fixed = await m.edit('tickets', x!);
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      expect(await subjectOf(m, x!)).toBe(fixed);
      expect((await m.quarantined('ticket')).find((q) => q.entity_id === x)).toBeUndefined();
      expect(await m.diff()).toEqual([]);
    }, 90_000);

    it('an upstream that answers no record read at all fails the cycle (exit 4); the records stay dirty, no failure counted', async () => {
      const y = m.ticketIds()[5]!;
      m.hostile.faults.trickle = { ids: 'all', lists: true, intervalMs: TRICKLE_MS };
      await m.edit('tickets', y);
      const r = await m.run();
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/The workspace is unavailable: no complete response within the timeout/);
      expect(await failedReads(m, y)).toBe(0);

      m.clearFaults();
      const subject = await m.edit('tickets', y);
      expect((await m.run()).code).toBe(0);
      expect(await subjectOf(m, y)).toBe(subject);
      expect(await m.dirty()).toEqual([]);
      expect(await m.diff()).toEqual([]);
    }, 60_000);

    it('a backfill whose one ticket read trickles copies the rest and leaves that ticket dirty for the first sync', async () => {
      const target = await dialect.newDatabase();
      try {
        const x = m.ticketIds()[2]!;
        m.hostile.faults.trickle = { ids: [x], intervalMs: TRICKLE_MS };
        const env = cliConfig(mkdtempSync(join(m.dir, 'backfill-')), {
          url: m.hostile.url,
          database: target.database,
          extra: { lookbackSeconds: LOOKBACK_SECONDS, drainPlan: 'record', ...FAST },
        });
        const r = await measure(['backfill'], env, m.dir);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/backfill: a ticket read failed while the workspace answered others/);
        const read = async <T>(fn: (s: Awaited<ReturnType<typeof openStore>>) => Promise<T>) => {
          const s = await openStore({ database: target.database, readonly: true });
          try {
            return await fn(s);
          } finally {
            await s.close();
          }
        };
        const dirty = await read((s) => databaseOf(s).selectFrom('dirty').select('entity_id').execute());
        expect(dirty.map((d) => d.entity_id)).toContain(x);
        const tickets = await read((s) => databaseOf(s).selectFrom('tickets').select('id').execute());
        expect(tickets.map((t) => t.id).sort()).toEqual(
          m
            .ticketIds()
            .filter((id) => id !== x)
            .sort(),
        );

        m.clearFaults();
        const s = await measure(['sync'], env, m.dir);
        expect(s.code, s.stderr).toBe(0);
        expect(await read((st) => diffMirror(databaseOf(st), m.sim.control.truth(), { lookbackSeconds: LOOKBACK_SECONDS }))).toEqual([]);
      } finally {
        await target.drop();
      }
    }, 60_000);
  });
}
