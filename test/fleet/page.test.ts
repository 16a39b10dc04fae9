import { describe, expect, it } from 'vitest';
import { renderFleetPage } from '../../src/fleet/page.js';
import type { WorkspaceStatus } from '../../src/fleet/index.js';

const base: WorkspaceStatus = {
  id: 'acme',
  schema: 'acme',
  state: 'current',
  lagSeconds: 0.5,
  currentAsOf: '2026-11-29T05:00:00.000Z',
  lastSuccessAt: '2026-11-29T05:00:01.000Z',
  stalenessSeconds: 4,
  lastError: null,
  backfillPhase: 'done',
  nextAt: null,
  requestsPerMinute: 12,
  requestsTotal: 100,
};

describe('fleet page', () => {
  it('escapes every upstream string and sorts the stalest first', () => {
    const hostile = '<img src=x onerror=alert(1)>"\'&';
    const page = renderFleetPage({
      at: '2026-11-29T05:00:05.000Z',
      workers: 2,
      views: { current: false, builtAt: null, error: { message: hostile, at: null } },
      workspaces: [
        base,
        {
          ...base,
          id: 'globex',
          state: 'failing',
          stalenessSeconds: 600,
          lastError: { code: 'UPSTREAM_UNAVAILABLE', message: hostile, at: null },
        },
        { ...base, id: 'never', state: 'new', stalenessSeconds: null, lastSuccessAt: null },
      ],
    });
    expect(page).not.toContain('<img');
    expect(page).toContain('&#60;img src=x onerror=alert(1)&#62;&#34;&#39;&#38;');
    const order = ['never', 'globex', 'acme'].map((id) => page.indexOf(`/workspaces/${id}"`));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order.every((i) => i > 0)).toBe(true);
    const byId = renderFleetPage(
      {
        at: '',
        workers: 1,
        views: { current: true, builtAt: null, error: null },
        workspaces: [
          { ...base, id: 'b' },
          { ...base, id: 'a', stalenessSeconds: 1 },
        ],
      },
      'id',
    );
    expect(byId.indexOf('/workspaces/a"')).toBeLessThan(byId.indexOf('/workspaces/b"'));
  });
});
