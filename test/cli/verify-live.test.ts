import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lifecycle, openClient, openMirror, resourcesFor, syncContext } from '../../src/session/index.js';
import { configSchema } from '../../src/config/index.js';
import type { Store } from '../../src/store/index.js';
import { emptyStats, runVerify, type SyncContext, type VerifyResult } from '../../src/sync/index.js';
import { readAsOf } from '../../src/sync/state.js';
import { SecretRedactor } from '../../src/util/redact.js';
import { byHand } from '../helpers/by-hand.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';
import { poll } from './ops-helpers.js';

type Truth = Array<{ id: string; updatedAt: string }>;

/**
 * Issue 46, point 5: `verify` against a workspace with live activity, while the daemon (the real
 * CLI, continuous) keeps the mirror: changes made after the mirror's as-of are in flight, never
 * drift (0 false drift in 20 runs), and a drift planted by hand (a row altered, a record deleted
 * from the mirror) is always found, whatever else is in flight; `verify --repair` mends it through
 * the running daemon's inbox, after which `verify` exits 0.
 */
for (const dialect of dialects) {
  describe(`verify under live activity (${dialect.name})`, () => {
    const sim = useSimulator({ seed: 46, tickets: 40, deals: 20, activity: 8 });
    let database: string;
    let done: () => Promise<void>;
    let ctx: SyncContext;
    let store: Store;
    let env: Record<string, string>;

    beforeAll(async () => {
      const { dir, cleanup } = tempDir();
      const target = await dialect.newDatabase();
      database = target.database;
      env = cliConfig(dir, { url: sim.url, database, extra: { schedule: 'continuous' } });
      const daemon = spawnCli(['run'], env);
      const life = new Lifecycle();
      const res = resourcesFor(
        configSchema.parse({ baseUrl: sim.url, apiKey: 'test-key', database, logLevel: 'warn' }),
        new SecretRedactor(),
      );
      done = async () => {
        daemon.kill('SIGTERM');
        await daemon.result;
        await life.close();
        await target.drop();
        cleanup();
      };
      // Keyed to the daemon's progress: its first cycle after the backfill recorded an as-of.
      await poll(async () => {
        try {
          store ??= await openMirror(res, life, { readonly: true });
          return (await readAsOf(store)) !== null;
        } catch {
          return false;
        }
      }, 60_000);
      ctx = syncContext(res, store, openClient(res, life), life);
    }, 90_000);
    afterAll(async () => done?.());

    const verify = (): Promise<VerifyResult> => runVerify(ctx, emptyStats(), { repair: false, settleMs: 10_000 });

    it('reports no drift in 20 runs while changes are in flight', async () => {
      let inFlight = 0;
      for (let run = 0; run < 20; run++) {
        const r = await verify();
        expect(r.drift, `run ${run}: ${JSON.stringify(r.drift)}`).toEqual([]);
        expect(r.asOf).not.toBeNull();
        inFlight += r.inFlight.length;
      }
      // The activity is live: some runs saw changes in flight (else this proves nothing).
      expect(inFlight).toBeGreaterThan(0);
      console.info(`${dialect.name}: ${inFlight} change(s) in flight over 20 runs, none reported as drift`);
    }, 240_000);

    it('always finds a row altered by hand and a record deleted from the mirror', async () => {
      const planted: Array<{ id: string; updatedAt: string; type: 'ticket' | 'deal'; expect: string }> = [];
      for (let round = 0; round < 3; round++) {
        // The least recently changed ticket and deal not planted yet: the activity is least likely to touch them.
        const ticket = nthOldest(sim.control.truth().tickets as Truth, round);
        const deal = nthOldest(sim.control.truth().deals as Truth, round);
        await byHand(dialect, database, `UPDATE tickets SET subject = $1 WHERE id = $2`, [`planted ${round}`, ticket.id]);
        await byHand(dialect, database, `DELETE FROM deals WHERE id = $1`, [deal.id]);
        planted.push({ ...ticket, type: 'ticket', expect: 'subject' }, { ...deal, type: 'deal', expect: 'missing' });
        const r = await verify();
        for (const p of planted) {
          // A planted record the activity changed meanwhile was re-read by the daemon: mended, not missed.
          const truth = (p.type === 'ticket' ? sim.control.truth().tickets : sim.control.truth().deals) as Truth;
          if (truth.find((x) => x.id === p.id)?.updatedAt !== p.updatedAt) continue;
          const named = r.drift.filter((d) => d.entityId === p.id).map((d) => d.field ?? d.kind);
          expect(named, `round ${round}: ${p.type} ${p.id}`).toContain(p.expect);
        }
        const others = r.drift.filter((d) => !planted.some((p) => p.id === d.entityId) && d.entityType !== 'pipeline');
        expect(others, 'only the planted records drift').toEqual([]);
      }
      // Through the CLI: exit 5, and the sentence says the repair works with the daemon running.
      const cli = await runCli(['verify'], env);
      expect(cli.code, cli.stdout + cli.stderr).toBe(5);
      expect(cli.stderr).toMatch(
        /it should already hold .*run `wsmirror verify --repair` .*works with the daemon \(`wsmirror run`\) running/,
      );
      // The daemon holds the writer lock: the repair goes through its inbox and the daemon re-reads the records.
      const repair = await runCli(['verify', '--repair', '--wait', '120'], env);
      expect(repair.code, repair.stdout + repair.stderr).toBe(0);
      expect(repair.stderr).toMatch(/another process holds the mirror; queued as writer request \d+/);
      expect(repair.stdout).toMatch(/^Repaired: \d+ record\(s\) marked, \d+ re-read.*; 0 not mended\.$/m);
      const [served] = await byHand(dialect, database, `SELECT kind, outcome FROM writer_requests ORDER BY id DESC LIMIT 1`, []);
      expect(served).toEqual({ kind: 'verify', outcome: 'done' });
      // Against the simulator's own state: every planted record the workspace still lists holds its copy again.
      const truth = sim.control.truth();
      for (const p of planted) {
        const live = ((p.type === 'ticket' ? truth.tickets : truth.deals) as Truth).some((x) => x.id === p.id);
        if (!live) continue; // deleted upstream by the activity meanwhile: nothing to bring back
        const table = p.type === 'ticket' ? 'tickets' : 'deals';
        const [row] = (await byHand(dialect, database, `SELECT * FROM ${table} WHERE id = $1`, [p.id])) as Array<Record<string, unknown>>;
        expect(row === undefined ? 'no row' : row.deleted_at, `${p.type} ${p.id} is back in the mirror\n${repair.stdout}`).toBeNull();
        if (p.type === 'ticket') expect(row!.subject).not.toMatch(/^planted /);
      }
      const after = await runCli(['verify'], env);
      expect(after.code, after.stdout + after.stderr).toBe(0);
      expect(after.stdout).toMatch(/: no drift/);
    }, 240_000);
  });
}

function nthOldest(records: Truth, n: number): { id: string; updatedAt: string } {
  return [...records].sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt))[n]!;
}
