import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/daemon/page/html.js';
import { renderPage } from '../../src/daemon/index.js';
import { cycleLog, facts, mirrorPart, snapshot, T0 } from './page-fixture.js';

const XSS = '<script>alert(1)</script>';

/** The markup of one element by id (the page's own ids are unique and its elements never nest themselves). */
function element(page: string, tag: string, id: string): string {
  const start = page.lastIndexOf(`<${tag} `, page.indexOf(` id="${id}"`));
  expect(start, `no <${tag} id="${id}">`).toBeGreaterThanOrEqual(0);
  return page.slice(start, page.indexOf(`</${tag}>`, start));
}

describe('the status page renderer', () => {
  it('shows every upstream string as text: a reason, an id, an error, the state line', () => {
    const { log } = cycleLog(3);
    const mirror = mirrorPart({
      quarantined: [
        {
          entityType: 'ticket',
          entityId: '"><img src=x onerror=alert(2)>',
          reason: `createdAt: not a valid ISO 8601 timestamp (got "${XSS}")`,
          lastSeenAt: '2026-03-01T11:00:00.000Z',
        },
      ],
      quarantinedByType: { ticket: 1 },
      recentRuns: [{ ...mirrorPart().recentRuns[0]!, outcome: 'failed', error: `<b onclick=x>boom</b>` }],
    });
    const page = renderPage(snapshot(facts({ failures: { consecutive: 2, lastError: `upstream said ${XSS}` } }), log, mirror));
    // One script element: the page's own refresh.
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<b onclick');
    const table = element(page, 'table', 'quarantine');
    expect(table).toContain(`(got &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;)`);
    expect(table).toContain('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;');
    expect(element(page, 'div', 'state')).toContain('upstream said &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(element(page, 'table', 'cycles')).toContain('&lt;b onclick=x&gt;boom&lt;/b&gt;');
  });

  it('escapes the five characters that matter in text and attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('draws one point per cycle on the lag and records charts, failed cycles as crosses, 429s as marks, with axes and units', () => {
    const { log } = cycleLog(12, 4);
    const page = renderPage(snapshot(facts(), log));
    const lag = element(page, 'svg', 'chart-lag');
    expect(lag).toContain('data-points="12"');
    expect(lag.match(/class="pt/g)).toHaveLength(12);
    expect(lag.match(/class="pt fail"/g)).toHaveLength(3);
    expect(lag).toContain('lag (s)');
    const records = element(page, 'svg', 'chart-records');
    expect(records.match(/<g class="pt">/g)).toHaveLength(12);
    expect(records).toContain('records / cycle');
    const requests = element(page, 'svg', 'chart-requests');
    expect(requests).toContain('requests / min');
    expect(requests.match(/class="mark-429"/g)?.length).toBeGreaterThan(0);
    // Time labels on the x axis and five value ticks on the y axis of each chart.
    for (const chart of [lag, records, requests]) {
      expect(chart.match(/text-anchor="middle">\d\d:\d\d/g)?.length).toBeGreaterThan(1);
      expect(chart.match(/class="axis" x="52"/g)).toHaveLength(5);
    }
  });

  it('lists this process cycles first, then older runs whose records by outcome were not kept', () => {
    const { log } = cycleLog(2);
    const table = element(renderPage(snapshot(facts(), log)), 'table', 'cycles');
    expect(table.match(/<tr class=/g)).toHaveLength(3);
    expect(table).toContain('1 fresh, 1 stale');
    expect(table).toContain('60 (by outcome not recorded)');
  });

  it('renders each state with its own line and class', () => {
    const { log } = cycleLog(1);
    const cases = [
      facts({ role: 'stopping' }),
      facts({ role: 'standby' }),
      facts({ failures: { consecutive: 1, lastError: 'Upstream unavailable after 6 attempts' } }),
      facts({
        runningSince: '2026-03-01T11:59:59.000Z',
        rateLimited: { since: '2026-03-01T11:59:59.000Z', until: '2026-03-01T12:00:59.000Z' },
      }),
      facts({
        backfill: { phase: 'tickets', copied: { deals: 10, tickets: 300 }, estimate: { deals: 10 }, ratePerSecond: { tickets: 100 } },
      }),
      facts({ runningSince: '2026-03-01T11:59:59.000Z' }),
      facts(),
    ];
    const kinds = cases.map((f) => /<div id="state" class="([a-z-]+)">([^<]+)<\/div>/.exec(renderPage(snapshot(f, log)))!.slice(1, 3));
    expect(kinds.map(([kind]) => kind)).toEqual(['stopping', 'standby', 'failing', 'rate-limited', 'backfilling', 'syncing', 'idle']);
    expect(kinds[3]![1]).toBe(
      'Rate-limited until 12:00:59 UTC at the latest: the upstream answered 429 at 11:59:59 UTC; the cycle waits for it.',
    );
  });

  it('shows "current as of" only when the snapshot has one', () => {
    const { log } = cycleLog(1);
    const without = snapshot(facts(), log);
    expect(renderPage(without)).not.toContain('id="current-as-of"');
    const withAsOf = {
      ...without,
      live: { ...without.live, freshness: { ...without.live.freshness, currentAsOf: '2026-03-01T11:59:55.000Z' } },
    };
    expect(renderPage(withAsOf)).toMatch(/id="current-as-of"><div class="k">current as of<\/div><div class="v">11:59:55 UTC</);
  });

  it('stays under 100 KB at its bounds and loads nothing from elsewhere', () => {
    // 2,000 cycles a minute apart: more than the log keeps one by one, so the charts draw buckets.
    const { log } = cycleLog(2_000, 7);
    const quarantined = Array.from({ length: 20 }, (_, i) => ({
      entityType: 'ticket',
      entityId: `t_${i}`,
      reason: `createdAt: not a valid ISO 8601 timestamp (got "${'x'.repeat(150)}")`,
      lastSeenAt: new Date(T0 - i * 1000).toISOString(),
    }));
    const s = snapshot(facts(), log, mirrorPart({ quarantined, quarantinedByType: { ticket: 10_000 } }));
    expect(s.live.charts?.cycleBucketSeconds).toBe(600);
    const page = renderPage(s);
    console.log(`status page at its bounds (144 chart points each, 20 cycles, 20 quarantined): ${Buffer.byteLength(page)} bytes`);
    expect(Buffer.byteLength(page)).toBeLessThan(100 * 1024);
    expect(page).not.toMatch(/\b(src|href)="(https?:)?\/\//);
    expect(page).not.toMatch(/@import|url\(/);
    expect([...page.matchAll(/href="([^"]+)"/g)].map((m) => m[1])).toEqual(['/status.json', '/metrics', '/healthz', '/readyz']);
  });
});
