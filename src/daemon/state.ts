import type { Role } from './health.js';

/** What the mirror's keeper is doing, in the order the state line checks them. */
export type StateKind = 'stopping' | 'standby' | 'failing' | 'rate-limited' | 'backfilling' | 'syncing' | 'idle' | 'unknown';

/**
 * The facts one state line is made of. The daemon fills them from its own memory; `wsmirror
 * status` from the daemon's answer, or from the mirror's tables when no daemon answers (then the
 * role and the rate limit are unknown: null).
 */
export interface StateFacts {
  /** Epoch ms the line is computed at. */
  now: number;
  role: Role | null;
  /** The cycle running now (ISO start), or null between cycles. */
  runningSince: string | null;
  backfill: {
    phase: string;
    copied: Record<string, number>;
    /** Expected totals where the upstream tells (deals). */
    estimate: Record<string, number>;
    /** Records per second per list over the last minute; absent where unknown. */
    ratePerSecond: Record<string, number>;
  } | null;
  /** The last answer was a 429: since when, and the latest instant the client retries by. */
  rateLimited: { since: string; until: string } | null;
  /** Cycles failed in a row (0 after a success) and the last one's sentence. */
  failures: { consecutive: number; lastError: string } | null;
  /** A liveness problem (a stalled cycle, a lost lock): the process itself is unwell. */
  problem: string | null;
  lastSuccessAt: string | null;
  lagSeconds: number | null;
}

export interface DaemonState {
  kind: StateKind;
  line: string;
}

/**
 * The one state line of the status page and of `wsmirror status`: the first that applies of
 * stopping, standby, failing (a liveness problem or failed cycles), rate-limited, backfilling,
 * syncing, idle.
 */
export function describeState(f: StateFacts): DaemonState {
  if (f.role === 'stopping') return { kind: 'stopping', line: 'Stopping: no new cycles; the work in flight commits first.' };
  if (f.role === 'standby')
    return { kind: 'standby', line: 'Standby: another process holds the writer lock; this one takes over when it stops.' };
  if (f.problem !== null) return { kind: 'failing', line: `Failing: ${sentence(f.problem)}` };
  if (f.rateLimited !== null && f.runningSince !== null) {
    const what = f.backfill ? `the backfill (phase ${f.backfill.phase})` : 'the cycle';
    return {
      kind: 'rate-limited',
      line: `Rate-limited until ${clock(f.rateLimited.until, f.now)} at the latest: the upstream answered 429 at ${clock(f.rateLimited.since, f.now)}; ${what} waits for it.`,
    };
  }
  if (f.failures !== null && f.failures.consecutive > 0) {
    const count = f.failures.consecutive === 1 ? 'the last cycle failed' : `the last ${f.failures.consecutive} cycles failed`;
    const next = f.runningSince !== null ? 'retrying now' : 'the next tick retries';
    return { kind: 'failing', line: `Failing: ${count} (${next}): ${sentence(f.failures.lastError)}` };
  }
  if (f.backfill !== null) return { kind: 'backfilling', line: backfillLine(f.backfill) };
  const lag = f.lagSeconds === null ? 'lag unknown' : `lag ${duration(f.lagSeconds)}`;
  if (f.runningSince !== null)
    return { kind: 'syncing', line: `Syncing: a cycle is running since ${clock(f.runningSince, f.now)}; ${lag} after the last one.` };
  if (f.lastSuccessAt !== null)
    return { kind: 'idle', line: `Idle: the last cycle succeeded at ${clock(f.lastSuccessAt, f.now)}; ${lag}.` };
  return { kind: 'unknown', line: 'No cycle has finished yet.' };
}

function backfillLine(b: NonNullable<StateFacts['backfill']>): string {
  const lists = Object.entries(b.copied).map(([list, n]) => {
    const total = b.estimate[list];
    return total === undefined ? `${count(n)} ${list}` : `${count(n)} of ~${count(total)} ${list}`;
  });
  const etas: string[] = [];
  for (const [list, total] of Object.entries(b.estimate)) {
    const done = b.copied[list] ?? 0;
    const rate = b.ratePerSecond[list];
    if (done >= total) continue;
    etas.push(
      rate !== undefined && rate > 0
        ? `${list} done in about ${duration((total - done) / rate)} at ${count(Math.round(rate))}/s`
        : `${list}: no rate measured yet`,
    );
  }
  const tail = etas.length > 0 ? `; ${etas.join('; ')}` : '';
  return `Backfilling (phase ${b.phase}): ${lists.join(', ') || 'nothing'} copied${tail}.`;
}

/** `12:03:04 UTC` for today's times; the date too when it is another day. */
export function clock(iso: string, now: number): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = d.toISOString().slice(11, 19);
  const sameDay = d.toISOString().slice(0, 10) === new Date(now).toISOString().slice(0, 10);
  return sameDay ? `${time} UTC` : `${d.toISOString().slice(0, 10)} ${time} UTC`;
}

/** 42 s, 3 min 5 s, 2 h 10 min, 3 d 4 h. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  return `${Math.floor(s / 86_400)} d${Math.floor((s % 86_400) / 3600) ? ` ${Math.floor((s % 86_400) / 3600)} h` : ''}`;
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** The `currentAsOf` field of LiveStatus.freshness: absent while unknown. */
export function asOfField(asOf: string | null | undefined): { currentAsOf?: string } {
  return asOf == null ? {} : { currentAsOf: asOf };
}
