/**
 * `maxRequestsPerSecond: "auto"` against the simulator's token bucket: a whole backfill (one
 * GET /tickets/:id per ticket dominates), and how much of the allowance it used and how many of
 * its requests were refused. The goal (bench/README.md): ≥ 80 % of the allowance, < 2 % 429s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from './jobs.js';
import { control, startSim, takeRequests } from './sim.js';

export type HeaderMode = 'all' | 'no-policy' | 'none';

export interface AutoRateFigures {
  allowance: number;
  headers: HeaderMode;
  tickets: number;
  ms: number;
  requests: number;
  rateLimited: number;
  /** Accepted requests per second over the whole backfill, slow start included. */
  acceptedPerSecond: number;
  /** acceptedPerSecond / allowance. */
  shareOfAllowance: number;
  /** 429s / requests. */
  share429: number;
  peakRssMb: number;
}

export async function measureAutoRate(args: {
  allowance: number;
  tickets: number;
  deals: number;
  headers: HeaderMode;
}): Promise<AutoRateFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-auto-'));
  const sim = await startSim({ tickets: args.tickets, deals: args.deals });
  try {
    // Turned on only now, so the simulator's start-up requests cost nothing; a full bucket.
    await control(sim.url, 'POST', 'faults', { rateLimitPerSecond: args.allowance, rateLimitHeaders: args.headers });
    await takeRequests(sim.url);
    const r = await runJob(
      'wsmirror-backfill',
      sim.url,
      JSON.stringify({ database: join(dir, 'auto.sqlite'), maxRequestsPerSecond: 'auto', maxRequestsPerSecondCeiling: 1000 }),
    );
    const seen = await takeRequests(sim.url);
    const limited = seen.byStatus['429'] ?? 0;
    const accepted = seen.total - limited;
    const perSecond = accepted / (r.ms! / 1000);
    return {
      allowance: args.allowance,
      headers: args.headers,
      tickets: args.tickets,
      ms: Math.round(r.ms!),
      requests: seen.total,
      rateLimited: limited,
      acceptedPerSecond: Number(perSecond.toFixed(1)),
      shareOfAllowance: Number((perSecond / args.allowance).toFixed(3)),
      share429: Number((limited / Math.max(1, seen.total)).toFixed(4)),
      peakRssMb: r.maxRssMb!,
    };
  } finally {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
