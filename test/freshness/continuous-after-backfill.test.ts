import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { spawnCli } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig } from '../cli/env.js';
import { freePort } from '../cli/ops-helpers.js';
import { callApi } from '../sync/harness.js';

const TOKEN = 'continuous-after-backfill-token';
/** The daemon's ceiling: the backfill makes ~10 × this many requests, which charged at a fifth of it was a 50 s doze. */
const RATE = 20;
/** The continuous goal (docs/operations.md, "Continuous mode"): a write visible within 2 s. */
const GOAL_MS = 2000;

interface LogLine {
  msg: string;
  [key: string]: unknown;
}

/** The daemon's JSON log lines as they arrive; `next` resolves with the first one after `from` that matches. */
function logLines(stream: NodeJS.ReadableStream) {
  const lines: LogLine[] = [];
  const waiting = new Set<() => void>();
  let rest = '';
  stream.on('data', (d: Buffer) => {
    const parts = (rest + d.toString()).split('\n');
    rest = parts.pop()!;
    for (const p of parts) if (p.startsWith('{')) lines.push(JSON.parse(p) as LogLine);
    for (const w of [...waiting]) w();
  });
  return {
    get count() {
      return lines.length;
    },
    next(from: number, match: (l: LogLine) => boolean): Promise<{ line: LogLine; at: number }> {
      return new Promise((resolve) => {
        const look = () => {
          const i = lines.findIndex((l, n) => n >= from && match(l));
          if (i < 0) return;
          waiting.delete(look);
          resolve({ line: lines[i]!, at: i });
        };
        waiting.add(look);
        look();
      });
    },
  };
}

/**
 * `run` with `schedule: "continuous"` from an EMPTY mirror, as a user starts it: the real backfill
 * under the request ceiling, then the loop. A write made right after the cycle that ended the
 * backfill, and one made right after a full lookback window that read many pages and found
 * nothing, are both in the mirror within the continuous goal, asked of the daemon through GET
 * /wait for that record. Each step is keyed to the daemon's own log line for the pause it chose.
 * Before the fix, the pause after the backfill's cycle was its requests at a fifth of the
 * ceiling (~50 s here), and after a full window its pages' (~10 s here).
 */
for (const dialect of dialects)
  describe(`continuous mode right after a backfill and a full window (${dialect.name})`, () => {
    const cleanups: (() => Promise<void> | void)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    it('shows a write made right after the backfill, and right after a full lookback window, within the goal', async () => {
      const { dir, cleanup } = tempDir();
      const target = await dialect.newDatabase();
      const sim = await startSimulator({ seed: 46, tickets: 150, deals: 30, control: true, apiKeys: { 'test-key': '' } });
      cleanups.push(cleanup, target.drop, () => sim.close());
      const port = await freePort();
      const extra = { schedule: 'continuous', maxRequestsPerSecond: RATE, pageSize: 5, fullLookbackEverySeconds: 4, http: { port } };
      const env = { ...cliConfig(dir, { url: sim.url, database: target.database, extra }), WSMIRROR_LOG_LEVEL: 'debug' };
      const daemon = spawnCli(['run'], { ...env, WSMIRROR_HTTP_AUTH_TOKEN: TOKEN });
      cleanups.push(() => void daemon.kill('SIGKILL'));
      const log = logLines(daemon.stderr);
      const pause = (from: number, match: (l: LogLine) => boolean = () => true) =>
        log.next(from, (l) => l.msg === 'continuous: next change-log read' && match(l));
      const waitFor = async (ticket: string, updatedAt: string) => {
        const query = `entity=ticket&id=${ticket}&updatedAt=${encodeURIComponent(updatedAt)}&timeoutMs=${GOAL_MS}`;
        const res = await fetch(`http://127.0.0.1:${port}/wait?${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        return { status: res.status, body: (await res.json()) as { status: string; record: { updatedAt: string } } };
      };
      const write = async (ticket: string, subject: string) =>
        ((await callApi(sim, 'PATCH', `/tickets/${ticket}`, { subject })) as { ticket: { updatedAt: string } }).ticket.updatedAt;
      const [first, second] = (sim.control.truth().tickets as { id: string }[]).map((t) => t.id);

      // The cycle that ended the backfill: its pause is an idle poll's, not the backfill's requests'.
      const backfilled = await log.next(0, (l) => l.msg === 'the mirror is empty or its backfill unfinished: backfilling first');
      const afterBackfill = await pause(backfilled.at);
      expect(afterBackfill.line.delayMs).toBeLessThanOrEqual((2 * 1000) / (0.2 * RATE));
      const written = await write(first!, 'right after the backfill');
      expect(await waitFor(first!, written)).toMatchObject({ status: 200, body: { status: 'current', record: { updatedAt: written } } });

      // Many events (pages of 5), read; then the next full window re-reads them all and finds nothing new.
      sim.control.act(60);
      const busy = await pause(afterBackfill.at + 1, (l) => Number(l.eventsNew) > 0);
      const full = await pause(busy.at + 1, (l) => l.fullLookback === true && l.eventsNew === 0 && l.ok === true);
      expect(Number(full.line.requests)).toBeGreaterThan(10);
      expect(full.line.delayMs).toBeLessThanOrEqual((2 * 1000) / (0.2 * RATE));
      const later = await write(second!, 'right after a full window');
      expect(await waitFor(second!, later)).toMatchObject({ status: 200, body: { status: 'current', record: { updatedAt: later } } });

      daemon.kill('SIGTERM');
      expect((await daemon.result).code).toBe(0);
    }, 120_000);
  });
