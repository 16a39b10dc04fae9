import { afterEach, describe, expect, it } from 'vitest';
import { recordRun, runBackfill, runSyncCycle } from '../../src/sync/index.js';
import { dialects } from '../helpers/dialects.js';
import { harness, type Harness } from '../sync/harness.js';
import { rows } from './oracle.js';

/**
 * Issue 7 acceptance: rpt_sync_health describes the last FINISHED run, so an alert on
 * last_run_outcome = 'failed' can fire; whether a run is going on is a separate column.
 */
for (const dialect of dialects)
  describe(`rpt_sync_health after each run (${dialect.name})`, () => {
    let h: Harness | null = null;
    afterEach(async () => {
      await h?.close();
      h = null;
    });

    const health = async () => (await rows(h!.store, 'SELECT * FROM rpt_sync_health'))[0];
    const sync = () => recordRun(h!.ctx, 'sync', (s) => runSyncCycle(h!.ctx, s));

    it("says 'success' after a successful cycle and 'failed' after a failed one", async () => {
      h = await harness({ dialect, sim: { tickets: 20, deals: 5 } });
      await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s));
      expect(await health()).toMatchObject({ last_run_outcome: 'success', running_since: null });

      h.sim.control.act(5);
      await sync();
      const ok = await health();
      expect(ok).toMatchObject({ last_run_outcome: 'success', running_since: null, failed_runs_24h: 0, runs_24h: 2 });
      const [run] = await rows(h.store, "SELECT finished_at FROM sync_runs WHERE kind = 'sync'");
      expect(ok.last_success_at).toBe(run.finished_at);

      // Every read of the change log fails (past the client's retries): the cycle fails.
      h.sim.control.failNext({ status: 500, count: 1000, path: '/api/v1/events' });
      await expect(sync()).rejects.toThrow();
      expect(await health()).toMatchObject({
        last_run_outcome: 'failed',
        running_since: null,
        failed_runs_24h: 1,
        last_success_at: ok.last_success_at,
      });

      h.sim.control.clearFaults();
      await sync();
      expect(await health()).toMatchObject({ last_run_outcome: 'success', failed_runs_24h: 1, runs_24h: 4 });
    });

    it('shows a run in progress separately, while still reporting the last finished one', async () => {
      h = await harness({ dialect, sim: { tickets: 5, deals: 2 } });
      await recordRun(h.ctx, 'backfill', (s) => runBackfill(h!.ctx, s));
      h.sim.control.act(3);
      let during: Record<string, unknown> | undefined;
      // The refresh inside the cycle is the one a reader sees while the run is still going on.
      await recordRun(h.ctx, 'sync', async (s) => {
        await runSyncCycle(h!.ctx, s);
        during = await health();
      });
      const [running] = await rows(h.store, "SELECT started_at FROM sync_runs WHERE kind = 'sync'");
      expect(during).toMatchObject({ last_run_outcome: 'success', running_since: running.started_at });
      expect(await health()).toMatchObject({ last_run_outcome: 'success', running_since: null });
    });
  });
