import { createHash } from 'node:crypto';
import type { RecordOutcome } from '../../sync/index.js';

/** One colour per record outcome: the bars of the records chart and their legend. */
const OUTCOME_COLORS: Record<RecordOutcome, string> = {
  fresh: '#2f7ed8',
  stale: '#f0a30a',
  'stale-accepted': '#a05eb5',
  deleted: '#7a7a7a',
  quarantined: '#d9534f',
};

/** The page's only style sheet, inline: the page loads nothing else (it must work offline). */
export const STYLE = `
:root{--fg:#1d2329;--muted:#5f6b76;--line:#dde3e8;--bg:#f5f7f9;--card:#fff;--ok:#2e8540;--warn:#c77c02;--bad:#c9302c;--info:#2f7ed8}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans","Liberation Sans",sans-serif}
main{max-width:1360px;margin:0 auto;padding:18px 22px 28px}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:6px 18px;margin-bottom:12px}
h1{font-size:20px;margin:0}
h2{font-size:15px;margin:0 0 8px}
.meta{color:var(--muted)}
.meta b{color:var(--fg);font-weight:600}
#state{padding:12px 16px;border-radius:6px;border-left:6px solid var(--info);background:var(--card);font-size:16px;font-weight:600;margin-bottom:14px;box-shadow:0 1px 2px rgba(0,0,0,.06)}
#state.idle,#state.syncing{border-color:var(--ok)}
#state.backfilling{border-color:var(--info)}
#state.rate-limited,#state.standby,#state.stopping,#state.unknown{border-color:var(--warn)}
#state.failing{border-color:var(--bad);background:#fdf3f2}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;margin-bottom:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:9px 12px}
.card .k{color:var(--muted);font-size:12px}
.card .v{font-size:18px;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.card .s{color:var(--muted);font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(380px,1fr));gap:10px;margin-bottom:14px}
section{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:12px 14px;margin-bottom:14px}
.charts section{margin:0}
.caption{color:var(--muted);font-size:12px;margin:4px 0 0}
svg.chart{width:100%;height:auto;display:block}
.grid{stroke:var(--line);stroke-width:1}
.axis-line{stroke:#9aa5ae;stroke-width:1}
.axis,.unit,.ceiling-label{fill:var(--muted);font-size:12px}
.line{fill:none;stroke:var(--info);stroke-width:1.6}
.req{fill:none;stroke:#8bb8e8}
circle.pt{fill:var(--info)}
.pt.fail{fill:var(--bad);stroke:var(--bad);stroke-width:2}
.ceiling{stroke:var(--bad);stroke-dasharray:5 4;stroke-width:1.2}
.mark-429{fill:var(--bad)}
.tick{stroke:#c3cbd2}
.bars path{fill:none}
${Object.entries(OUTCOME_COLORS)
  .map(([o, c]) => `.o-${o}{stroke:${c}}.legend i.o-${o}{background:${c}}`)
  .join('\n')}
.legend{display:flex;flex-wrap:wrap;gap:4px 12px;font-size:12px;color:var(--muted);margin-top:4px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
td.t{white-space:nowrap}
th{color:var(--muted);font-weight:600;font-size:12px;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.err,td.reason{max-width:520px;overflow-wrap:anywhere}
tr.failed td{background:#fdf3f2}
.badge{display:inline-block;padding:0 6px;border-radius:9px;font-size:12px;background:#e8edf1}
.badge.success{background:#e3f3e6;color:var(--ok)}
.badge.failed{background:#f9e0df;color:var(--bad)}
.badge.aborted,.badge.running{background:#fff1d6;color:var(--warn)}
.muted{color:var(--muted)}
footer{color:var(--muted);font-size:12px}
footer a{color:var(--info);margin-right:14px}
`;

/**
 * Reloads the page every 5 s while it is visible; a hidden tab asks for nothing until it is shown
 * again. Allowed by its hash in the Content-Security-Policy, so no other script can run.
 */
export const SCRIPT = `(function(){var t;function arm(){clearTimeout(t);if(document.visibilityState==='visible')t=setTimeout(function(){location.reload()},5000)}document.addEventListener('visibilitychange',arm);arm()})();`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The Content-Security-Policy of the page: nothing loads from anywhere, and only the page's own
 * style sheet and script (by their hashes) apply; no inline style attribute or other script does.
 */
export const PAGE_CSP = `default-src 'none'; style-src ${sha256(STYLE)}; script-src ${sha256(SCRIPT)}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
