import type { FleetStatus, WorkspaceStatus } from './status.js';

/** Every upstream or user string on the page goes through this. */
export function esc(value: string | number | null | undefined): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const SORTS: Record<string, (a: WorkspaceStatus, b: WorkspaceStatus) => number> = {
  staleness: (a, b) => (b.stalenessSeconds ?? Infinity) - (a.stalenessSeconds ?? Infinity) || a.id.localeCompare(b.id),
  lag: (a, b) => (b.lagSeconds ?? Infinity) - (a.lagSeconds ?? Infinity) || a.id.localeCompare(b.id),
  id: (a, b) => a.id.localeCompare(b.id),
};

const ago = (s: number | null) =>
  s === null ? 'never' : s < 120 ? `${Math.round(s)} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;

/** The fleet page: one line per workspace, stalest first unless `?sort=` says otherwise. */
export function renderFleetPage(status: FleetStatus, sort = 'staleness'): string {
  const order = SORTS[sort] ?? SORTS.staleness!;
  const rows = [...status.workspaces].sort(order).map(
    (
      w,
    ) => `<tr class="${esc(w.state)}"><td><a href="/workspaces/${encodeURIComponent(w.id)}">${esc(w.id)}</a></td><td>${esc(w.state)}${w.backfillPhase && w.state === 'backfilling' ? ` (${esc(w.backfillPhase)})` : ''}</td>
<td>${w.lagSeconds === null ? 'unknown' : `${w.lagSeconds.toFixed(1)} s`}</td><td>${esc(w.currentAsOf ?? 'not yet')}</td>
<td>${esc(w.lastSuccessAt ?? 'never')} (${ago(w.stalenessSeconds)})</td><td>${w.lastError ? `${esc(w.lastError.code)}: ${esc(w.lastError.message)}` : ''}</td><td>${w.requestsPerMinute}</td></tr>`,
  );
  const head = (key: string, label: string) => (SORTS[key] ? `<a href="/?sort=${key}">${label}</a>` : label);
  return `<!doctype html><html><head><meta charset="utf-8"><title>wsmirror fleet</title><meta http-equiv="refresh" content="10">
<style>body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
tr.failing td,tr.key_rejected td,tr.key_unavailable td{background:#fde8e8}tr.paused td{color:#888}</style></head><body>
<h1>wsmirror fleet</h1><p>${status.workspaces.length} workspaces, ${status.workers} worker(s) alive, at ${esc(status.at)}. Cross-workspace views: ${status.views.current ? `current (built ${esc(status.views.builtAt ?? 'never')})` : 'waiting for their next rebuild'}${status.views.error ? `; <strong>last rebuild failed: ${esc(status.views.error.message)}</strong>` : ''}. <a href="/fleet.json">JSON</a> · <a href="/metrics">metrics</a></p>
<table><thead><tr><th>${head('id', 'workspace')}</th><th>state</th><th>${head('lag', 'lag')}</th><th>current as of</th><th>${head('staleness', 'last success')}</th><th>last error</th><th>requests/min</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table></body></html>`;
}
