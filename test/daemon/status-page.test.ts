import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import type { StatusReport } from '../../src/daemon/index.js';
import { REPO, spawnCli, waitForOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig } from '../cli/env.js';
import { freePort, poll } from '../cli/ops-helpers.js';
import { Browser, chromiumUnavailable } from './browser.js';
import { startGateProxy, type GateProxy } from './gate-proxy.js';

const XSS = '<script>alert(1)</script>';
const XSS_ATTR = '<img src=x onerror="window.__xss=1">';
/** Where the screenshots go; README's docs/status-page.png is the "syncing" one. */
const OUT = join(REPO, 'test-output', 'status-page');

const unavailable = chromiumUnavailable();
if (unavailable) console.warn(`status-page.test: the browser test is skipped: ${unavailable}`);

/** What the rendered page shows, read from its DOM in the browser. */
interface Rendered {
  stateClass: string;
  state: string;
  lagPoints: number;
  lagFailed: number;
  recordPoints: number;
  requestPoints: number;
  marks429: number;
  cycleRows: number;
  firstOutcome: string;
  reasons: { text: string; elements: number }[];
  xss: unknown;
}

const READ_DOM = `(() => {
  const q = (s) => document.querySelectorAll(s);
  const state = document.getElementById('state');
  return {
    stateClass: state.className,
    state: state.textContent,
    lagPoints: q('#chart-lag .pt').length,
    lagFailed: q('#chart-lag .pt.fail').length,
    recordPoints: q('#chart-records g.pt').length,
    requestPoints: Number(document.getElementById('chart-requests').dataset.points),
    marks429: q('#chart-requests .mark-429').length,
    cycleRows: q('#cycles tbody tr').length,
    firstOutcome: q('#cycles tbody tr .badge')[0]?.textContent ?? '',
    reasons: [...q('#quarantine td.reason')].map((td) => ({ text: td.textContent, elements: td.children.length })),
    xss: window.__xss,
  };
})()`;

describe.skipIf(unavailable !== null)('the status page in a real browser', () => {
  let sim: Simulator;
  let proxy: GateProxy;
  let browser: Browser;
  const ids: string[] = [];

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    sim = await startSimulator({ seed: 11, tickets: 400, deals: 40, control: true, apiKeys: { 'test-key': '' } });
    const tickets = sim.control.truth().tickets as { id: string }[];
    ids.push(tickets[0]!.id, tickets[1]!.id);
    proxy = await startGateProxy(sim.url, { [ids[0]!]: { createdAt: XSS }, [ids[1]!]: { createdAt: XSS_ATTR } });
    browser = await Browser.launch(1280, 900);
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await sim?.close();
  });

  it(
    'shows a backfill, then syncing, then a failing upstream: state line, charts, cycles and the quarantine as text',
    { timeout: 300_000 },
    async () => {
      const { dir, cleanup } = tempDir();
      const port = await freePort();
      const env = {
        ...cliConfig(dir, { url: proxy.url, extra: { pageSize: 20, maxRequestsPerSecond: 600 } }),
        WSMIRROR_LOG_LEVEL: 'info',
        WSMIRROR_HTTP_PORT: String(port),
      };
      const page = `http://127.0.0.1:${port}/`;
      const report = async () => (await (await fetch(`${page}status.json`)).json()) as StatusReport;
      const stateIs = (kind: string) => poll(async () => (await report()).live.state.kind === kind, 60_000);
      const look = async (name: string): Promise<Rendered> => {
        await browser.open(page);
        await browser.screenshot(join(OUT, `${name}.png`));
        return browser.evaluate<Rendered>(READ_DOM);
      };
      // Hold the backfill at its second page of tickets, after the first (the newest tickets, both patched ones).
      let ticketPages = 0;
      proxy.holdWhen((path) => path.startsWith('/api/v1/tickets?') && ++ticketPages === 2);
      const daemon = spawnCli(['run'], env);
      let log = '';
      daemon.stderr.on('data', (d: Buffer) => (log += d.toString()));
      // The first backfill is a cycle of its own on the page, apart from its catch-up sync.
      const cyclesLogged = () => (log.match(/"msg":"sync cycle"|"msg":"sync failed|"msg":"backfill complete"/g) ?? []).length;
      try {
        await poll(() => Promise.resolve(proxy.waiting > 0), 60_000);
        // The page before the held one may still be committing: wait for its quarantined tickets.
        await poll(async () => {
          const r = await report();
          return r.live.state.kind === 'backfilling' && r.quarantined.length === 2;
        }, 60_000);
        const backfill = await look('backfilling');
        expect(backfill.stateClass).toBe('backfilling');
        expect(backfill.state).toMatch(/^Backfilling \(phase tickets\): 40 of ~40 deals, [1-9]\d* tickets, \d+ events copied\.$/);
        checkQuarantine(backfill);

        proxy.release();
        await waitForOutput(daemon, /"msg":"sync cycle"/);
        // Some cycles with writes to re-read, a few of them answered 429 at first.
        sim.control.setFaults({ rateLimitRate: 0.1 });
        for (let i = 0; i < 12; i++) {
          sim.control.act(8);
          const seen = cyclesLogged();
          await poll(() => Promise.resolve(cyclesLogged() > seen), 60_000);
        }
        sim.control.setFaults({ rateLimitRate: 0 });
        proxy.holdWhen();
        await stateIs('syncing');
        const cycles = (await report()).live.charts!.cycles.length;
        await poll(() => Promise.resolve(cyclesLogged() === cycles));
        const syncing = await look('syncing');
        expect(syncing.state).toMatch(/^Syncing: a cycle is running since \d\d:\d\d:\d\d UTC; lag \d+ s after the last one\.$/);
        expect([syncing.lagPoints, syncing.recordPoints]).toEqual([cycles, cycles]);
        expect(syncing.cycleRows).toBe(Math.min(20, cycles));
        expect(syncing.requestPoints).toBeGreaterThan(0);
        checkQuarantine(syncing);

        proxy.release();
        sim.control.setFaults({ errorRate: 1 });
        await waitForOutput(daemon, /sync failed; the next tick retries/);
        await stateIs('failing');
        const lastError = ((await (await fetch(`${page}healthz`)).json()) as { lastError: string }).lastError;
        const failing = await look('failing');
        expect(failing.state).toMatch(/^Failing: the last (cycle|\d+ cycles) failed \((retrying now|the next tick retries)\): /);
        expect(failing.state).toContain(lastError);
        expect(failing.lagFailed).toBeGreaterThan(0);
        expect(failing.firstOutcome).toBe('failed');
        checkQuarantine(failing);
        expect(browser.dialogs).toEqual([]);
      } finally {
        proxy.release();
        sim.control.clearFaults();
        daemon.kill('SIGTERM');
        await daemon.result;
        cleanup();
      }
    },
  );

  /** Both patched tickets are quarantined, their reasons shown as text: no element, no script ran. */
  function checkQuarantine(r: Rendered): void {
    const texts = r.reasons.map((x) => x.text);
    expect(texts).toContain(`createdAt: not a valid ISO 8601 timestamp (got "${XSS}")`);
    expect(texts).toContain(`createdAt: not a valid ISO 8601 timestamp (got ${JSON.stringify(XSS_ATTR)})`);
    expect(r.reasons.every((x) => x.elements === 0)).toBe(true);
    expect(r.xss).toBeUndefined();
  }
});
