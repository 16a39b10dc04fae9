import { RECORD_OUTCOMES } from '../cycle-log.js';
import { clock, count, duration } from '../state.js';
import { ceilingDrawn, lagChart, recordsChart, requestsChart } from './charts.js';
import { markup, trusted, type Markup } from './html.js';
import type { CycleRow, PageSnapshot } from './snapshot.js';
import { SCRIPT, STYLE } from './style.js';

/**
 * The status page: a pure function of its snapshot, so every state can be rendered and checked
 * without a daemon. Every value goes through `markup`, which escapes it.
 */
export function renderPage(s: PageSnapshot): string {
  const now = Date.parse(s.generatedAt);
  const live = s.live;
  const uptime = live.uptimeSeconds === null ? 'unknown' : duration(live.uptimeSeconds);
  const mirrorError =
    s.mirrorError === null
      ? null
      : markup`<section id="mirror-error"><h2>The mirror could not be read (yet)</h2><p>${s.mirrorError}</p></section>`;
  const up = s.frame ? markup`<a id="up" href="${s.frame.up.href}">← ${s.frame.up.label}</a>` : null;
  const note = s.frame ? markup`<p id="frame-note">${s.frame.note}</p>` : null;
  const json = s.frame?.json ?? '/status.json';
  const page = markup`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${s.frame ? `${s.frame.title} · ` : ''}wsmirror · ${live.state.kind}</title><noscript><meta http-equiv="refresh" content="5"></noscript><style>${trusted(STYLE)}</style></head>
<body><main>
<header>${up}<h1>${s.frame?.title ?? 'wsmirror'}</h1><span class="meta">${s.mirror?.database ?? ''}</span><span class="meta">role <b id="role">${live.role ?? 'unknown'}</b></span><span class="meta">version <b>${live.version ?? 'unknown'}</b></span><span class="meta">up <b>${uptime}</b></span><span class="meta">as of <b>${clock(s.generatedAt, now)}</b> · times in UTC · refreshes every 5 s</span></header>
${note}
<div id="state" class="${live.state.kind}">${live.state.line}</div>
${mirrorError}
${cards(s, now)}
${charts(s)}
${cycleTable(s.cycles, now)}
${quarantine(s, now)}
${verify(s, now)}
<footer>Endpoints: <a href="${json}">${json}</a><a href="/metrics">/metrics</a><a href="/healthz">/healthz</a><a href="/readyz">/readyz</a> · docs/operations.md, "The status page"</footer>
</main><script>${trusted(SCRIPT)}</script></body></html>
`;
  return page.text;
}

function card(id: string, key: string, value: string, sub: string | null): Markup {
  const note = sub === null ? null : markup`<div class="s">${sub}</div>`;
  return markup`<div class="card" id="${id}"><div class="k">${key}</div><div class="v">${value}</div>${note}</div>`;
}

function cards(s: PageSnapshot, now: number): Markup {
  const f = s.live.freshness;
  const m = s.mirror;
  const quarantined = m ? Object.values(m.quarantinedByType).reduce((a, b) => a + b, 0) : null;
  const since = f.lastSuccessAt === null ? null : `${duration((now - Date.parse(f.lastSuccessAt)) / 1000)} ago`;
  return markup`<div class="cards">
${card('lag', 'lag', f.lagSeconds === null ? 'unknown' : duration(f.lagSeconds), 'newest upstream event − watermark, at the last cycle')}
${f.currentAsOf === undefined ? null : card('current-as-of', 'current as of', clock(f.currentAsOf, now), 'every change up to this instant is in the mirror')}
${card('last-success', 'last success', f.lastSuccessAt === null ? 'never' : clock(f.lastSuccessAt, now), since)}
${card('watermark', 'watermark', f.watermark === null ? 'none' : clock(f.watermark, now), 'newest upstream event applied')}
${card('dirty', 'dirty', m ? count(m.dirty) : '–', 'records waiting to be re-read')}
${card('quarantined', 'quarantined', quarantined === null ? '–' : count(quarantined), 'records that failed validation')}
${m?.storage ? card('storage', 'SQLite file / WAL (MiB)', `${mib(m.storage.databaseBytes)} / ${mib(m.storage.walBytes)}`, 'the WAL is checkpointed after each cycle') : null}
</div>`;
}

function charts(s: PageSnapshot): Markup | null {
  const data = s.live.charts;
  if (data === null) return null;
  const to = Date.parse(data.to);
  const span = `${clock(data.from, to)} – ${clock(data.to, to)}`;
  const per = data.cycleBucketSeconds === null ? 'one point per cycle' : `one point per ${data.cycleBucketSeconds / 60} min`;
  const ceiling = s.live.requestCeilingPerMinute;
  const ceilingNote =
    ceiling === null
      ? ''
      : ceilingDrawn(data, ceiling)
        ? '; dashed: the ceiling'
        : `; the ceiling, ${count(ceiling)}/min, is above this scale`;
  const legend = RECORD_OUTCOMES.map((o) => markup`<span><i class="o-${o}"></i>${o}</span>`);
  return markup`<div class="charts">
<section><h2>Lag</h2>${lagChart(data)}<p class="caption">${span}; ${per}; × a failed cycle (it measured no lag)</p></section>
<section><h2>Requests per minute</h2>${requestsChart(data, ceiling)}<p class="caption">${span}; attempts averaged per ${duration(data.requestBucketSeconds)}, retries included; red marks: answers 429${ceilingNote}</p></section>
<section><h2>Records re-read per cycle</h2>${recordsChart(data)}<div class="legend">${legend}</div><p class="caption">${span}; ${per}, stacked by outcome</p></section>
</div>`;
}

function cycleTable(rows: CycleRow[], now: number): Markup {
  const body = rows.map((r) => {
    const records = r.records
      ? RECORD_OUTCOMES.filter((o) => r.records![o] > 0)
          .map((o) => `${count(r.records![o])} ${o}`)
          .join(', ') || '0'
      : `${count(r.recordsTotal ?? 0)} (by outcome not recorded)`;
    const copied = r.copied > 0 ? `; ${count(r.copied)} copied` : '';
    const limited = r.rateLimited ? ` (${r.rateLimited}× 429)` : '';
    return markup`<tr class="${r.outcome}"><td class="t">${time(r.startedAt, now)}</td><td class="n">${r.durationMs === null ? '–' : shortDuration(r.durationMs)}</td><td>${r.kind}</td><td class="n">${num(r.eventsRead)} / ${num(r.eventsNew)}</td><td>${records}${copied}</td><td class="n">${num(r.requests)}</td><td class="n">${num(r.retries)}${limited}</td><td><span class="badge ${r.outcome}">${r.outcome}</span></td><td class="err">${r.error ?? ''}</td></tr>`;
  });
  const empty = rows.length === 0 ? markup`<p class="muted">No cycle yet.</p>` : null;
  return markup`<section><h2>Last ${rows.length} cycles</h2><table id="cycles"><thead><tr><th>start</th><th class="n">duration</th><th>kind</th><th class="n">events read / new</th><th>records by outcome</th><th class="n">requests</th><th class="n">retries</th><th>outcome</th><th>error</th></tr></thead><tbody>${body}</tbody></table>${empty}</section>`;
}

function quarantine(s: PageSnapshot, now: number): Markup | null {
  const m = s.mirror;
  if (!m) return null;
  const total = Object.values(m.quarantinedByType).reduce((a, b) => a + b, 0);
  const byType = Object.entries(m.quarantinedByType)
    .map(([type, n]) => `${count(n)} ${type}`)
    .join(', ');
  const rows = m.quarantined.map(
    (q) =>
      markup`<tr><td>${q.entityType}</td><td>${q.entityId}</td><td class="reason">${q.reason}</td><td class="t">${q.lastSeenAt ? time(q.lastSeenAt, now) : ''}</td></tr>`,
  );
  const content =
    total === 0
      ? markup`<p class="muted">Nothing quarantined.</p>`
      : markup`<table id="quarantine"><thead><tr><th>entity</th><th>id</th><th>reason</th><th>last seen</th></tr></thead><tbody>${rows}</tbody></table><p class="caption">The newest ${m.quarantined.length}; the quarantine table holds every one with its raw JSON.</p>`;
  return markup`<section><h2>Quarantine: ${count(total)} record(s)${total > 0 ? ` (${byType})` : ''}</h2>${content}</section>`;
}

function verify(s: PageSnapshot, now: number): Markup {
  const run = s.mirror?.lastVerify ?? null;
  const mine = s.live.verify;
  if (run === null && mine === null)
    return markup`<section id="verify"><h2>Last verify</h2><p class="muted">No verify --repair or nightly reconcile has run on this mirror yet.</p></section>`;
  const outcome = run?.outcome ?? 'running';
  const runLine = run
    ? markup`<p>${run.kind} started ${clock(run.started_at ?? '', now)}: <span class="badge ${outcome}">${outcome}</span>, ${count(run.records_fetched ?? 0)} record(s) re-read${run.error ? `; ${run.error}` : ''}</p>`
    : null;
  const mineLine = mine
    ? markup`<p>The last reconcile of this process (${clock(mine.at, now)}) found ${count(mine.drift)} difference(s) and re-read ${count(mine.repaired)} record(s).</p>`
    : markup`<p class="muted">How many differences a run found is known only for a reconcile this process ran.</p>`;
  return markup`<section id="verify"><h2>Last verify</h2>${runLine}${mineLine}</section>`;
}

/** A table's time: the page's header says UTC once. */
function time(iso: string, now: number): string {
  return clock(iso, now).replace(/ UTC$/, '');
}

/** 180 ms, 4.2 s, then minutes and hours. */
function shortDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return duration(ms / 1000);
}

function num(n: number | null): string {
  return n === null ? '–' : count(n);
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
