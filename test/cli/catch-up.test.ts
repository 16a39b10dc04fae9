import { afterEach, describe, expect, it } from 'vitest';
import type { ActivityRecord } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/index.js';
import { dialects, type Dialect } from '../helpers/dialects.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { diffMirror } from '../helpers/truth.js';
import { cliConfig, useSimulator } from './env.js';
import { databaseOf } from '../../src/store/internal.js';

/** A schedule that does not fire while a test runs: every cycle after the first is a catch-up. */
const YEARLY = '0 0 0 1 1 *';

/** `wsmirror run` starts the next cycle at once when a cycle ends behind (docs/sync.md, "Catch-up"). */
for (const dialect of dialects)
  describe(`run catches up on ${dialect.name}`, () => {
    const sim = useSimulator({ seed: 13, tickets: 30, deals: 10 });
    let done: Array<() => Promise<void> | void> = [];
    afterEach(async () => {
      for (const f of done.reverse()) await f();
      done = [];
    });

    async function mirror(d: Dialect) {
      const { dir, cleanup } = tempDir();
      const target = await d.newDatabase();
      done.push(cleanup, () => target.drop());
      const env = {
        ...cliConfig(dir, { url: sim.url, database: target.database, extra: { schedule: YEARLY } }),
        WSMIRROR_LOG_LEVEL: 'info',
      };
      return { env, database: target.database };
    }

    it('a cycle whose drain finds a record changed after its window is followed at once, not at the next tick', async () => {
      const { env, database } = await mirror(dialect);
      expect((await runCli(['backfill'], env)).code).toBe(0);
      // A write whose own event is not visible yet, and a visible event one second older naming the
      // same record: the first cycle re-reads the record and finds it newer than what it read of the
      // log, which is what a write landing during the drain looks like.
      sim.control.setFaults({ lateEventRate: 1, lateEventDelayMs: 3_600_000 });
      const { write, hidden } = liveWrite(() => sim.control.act(1));
      sim.control.clearFaults();
      const at = sim.control.now().getTime();
      sim.control.injectEvent({
        type: `${write.entityType}.updated`,
        entityType: write.entityType,
        entityId: write.entityId,
        occurredAt: new Date(at - 1000).toISOString(),
      });

      const daemon = spawnCli(['run'], env);
      await waitForOutput(daemon, /catching up[\s\S]*"msg":"sync cycle"/, 60_000);
      daemon.kill('SIGTERM');
      const r = await daemon.result;
      expect(r.code).toBe(0);
      const lines = r.stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const cycles = lines.filter((l) => l.msg === 'sync cycle');
      expect(cycles.map((c) => c.behind)).toEqual(['newer-records', null]);
      expect(cycles.map((c) => c.fullLookback)).toEqual([true, false]);
      expect(lines.filter((l) => l.msg === 'catching up: starting the next cycle at once')).toEqual([
        expect.objectContaining({ reason: 'newer-records', streak: 1 }),
      ]);

      const store = await openStore({ database });
      try {
        const runs = await databaseOf(store).selectFrom('sync_runs').select(['kind', 'outcome']).where('kind', '=', 'sync').execute();
        expect(runs).toEqual([
          { kind: 'sync', outcome: 'success' },
          { kind: 'sync', outcome: 'success' },
        ]);
        // Writes acted before the live one have their events hidden for an hour: the mirror cannot know them yet.
        const diffs = await diffMirror(databaseOf(store), sim.control.truth());
        expect(diffs.filter((d) => !hidden.some((id) => d.includes(id)))).toEqual([]);
      } finally {
        await store.close();
      }
    });
  });

/** Acts until a write changes a ticket or deal that stays listed (not a deletion); also returns the records of the writes before it. */
function liveWrite(act: () => ActivityRecord[]): { write: ActivityRecord; hidden: string[] } {
  const hidden: string[] = [];
  for (let i = 0; i < 50; i++) {
    const writes = act();
    const w = writes.find((a) => (a.entityType === 'ticket' || a.entityType === 'deal') && !a.kind.startsWith('delete'));
    if (w) return { write: w, hidden };
    hidden.push(...writes.map((a) => a.entityId));
  }
  throw new Error('no write to a ticket or deal in 50 tries');
}
