import { readHeadlines, type Headlines } from '../../report/index.js';
import type { GlobalFlags } from '../../session/index.js';
import { openReader } from '../session.js';
import type { SecretRedactor } from '../../util/redact.js';

const num = (n: number | null, digits = 1) => (n === null ? '-' : n.toFixed(digits));
const pct = (n: number | null) => (n === null ? '-' : `${(n * 100).toFixed(1)}%`);

/** The headline figures as aligned label/value lines, for a terminal. */
export function formatHeadlines(h: Headlines): string[] {
  const w = h.last7Days;
  const rows: [string, string][] = [
    ['Backlog (unresolved tickets)', String(h.backlog)],
    [`Created, ${w.from}..${w.to}`, String(w.created)],
    [`Solved, ${w.from}..${w.to}`, String(w.solved)],
    [
      'First reply, median / p90 (min)',
      `${num(w.firstReplyMedianMinutes)} / ${num(w.firstReplyP90Minutes)} over ${w.firstReplies} tickets`,
    ],
    ['SLA achievement, last 7 days', `${pct(w.slaAchievementRate)} (${w.slaAchieved} achieved, ${w.slaBreached} breached)`],
    ...h.openPipeline.map((p): [string, string] => [`Open pipeline, ${p.currency ?? '(no currency)'}`, `${p.amount} in ${p.deals} deals`]),
    [`Win rate ${h.quarter.label}`, `${pct(h.quarter.winRate)} (${h.quarter.won} won, ${h.quarter.lost} lost)`],
  ];
  if (h.openPipeline.length === 0) rows.splice(5, 0, ['Open pipeline', 'no open deals']);
  if (h.sync) {
    rows.push(['Watermark', h.sync.watermark ?? '-']);
    rows.push([
      'Last successful sync',
      `${h.sync.lastSuccessAt ?? 'never'}${h.sync.lagSeconds === null ? '' : ` (${num(h.sync.lagSeconds, 0)} s before refresh)`}`,
    ]);
    rows.push(['Dirty / quarantined records', `${h.sync.dirty} / ${h.sync.quarantined}`]);
  }
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`);
  lines.unshift(`Reporting figures as of ${h.asOf} (tables refreshed ${h.refreshedAt ?? 'never'})`);
  if (h.refreshedAt === null) lines.push('The reporting tables are empty: they fill at the end of each `wsmirror sync` or `run` cycle.');
  return lines;
}

/** A reader: takes no lock, reads only the rpt_ tables. */
export async function reportCommand(flags: GlobalFlags, opts: { json?: boolean }, redactor: SecretRedactor): Promise<void> {
  const { life, store } = await openReader(flags, redactor);
  try {
    const headlines = await readHeadlines(store);
    if (opts.json) process.stdout.write(`${JSON.stringify(headlines, null, 2)}\n`);
    else process.stdout.write(`${formatHeadlines(headlines).join('\n')}\n`);
  } finally {
    await life.close();
  }
}
