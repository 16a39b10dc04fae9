import type { Pipeline } from '../api/index.js';
import { RECORD_ENTITIES, type ListedRecord, type RecordEntity } from '../entities/index.js';
import type { SyncContext } from './context.js';
import type { Drift } from './verify-drift.js';
import { readAsOf } from './state.js';
import type { RunStats } from './stats.js';
import { repairTarget, runVerifyRepair } from './verify-repair.js';
import { contentDrift, judgeUnlisted, type Unlisted } from './verify-absent.js';
import {
  awaitAsOf,
  changesSince,
  classify,
  secondLook,
  type Candidate,
  type InFlight,
  type RecentChanges,
  type SettleOptions,
} from './verify-flight.js';

export interface VerifyResult {
  /** Items checked per list (`tickets`, `deals`, …, `pipelines`). */
  checked: Record<string, number>;
  /** The mirror's "current as of" at the last look (null: it records none, and every difference is drift). */
  asOf: string | null;
  /** What the mirror should already hold and does not. */
  drift: Drift[];
  /** Changes made upstream after the as-of, not yet expected in the mirror (not drift). */
  inFlight: InFlight[];
  /** Records the lists did not show, read by id to tell a list that skipped them from drift (docs/sync.md, "Verify"). */
  readById: number;
  /** The change log since the as-of had more events than verify reads: older ones count as drift. */
  changeLogTruncated: boolean;
  repaired: number;
}

/** Options of `runVerify`. */
export interface VerifyOptions extends Partial<SettleOptions> {
  /** Re-read what differs (drift and changes in flight). */
  repair: boolean;
}

/**
 * Compares the mirror with what the list pages show (docs/sync.md, "Verify"): every listed ticket
 * and deal (missing, extra, another `updatedAt`, and for the same version every stored column,
 * tags, custom fields, contacts, and a ticket's message rows against its stored copy), every
 * pipeline and stage, and each pipeline's dealCount. A difference made upstream after the
 * mirror's as-of (its listed version, or the change log read from the as-of on) is in flight, not
 * drift; once a writer moves the as-of past it (a bounded wait), a second look judges it again.
 * A record the list did not show is read by id before it is called drift when the change log
 * shows records leaving that list: a list paged by position skips records that stayed then.
 * With `repair`, the differing records are only marked dirty, so the same drain as `sync` re-reads
 * them; differing pipelines and stages are written again from the list already read.
 */
export async function runVerify(ctx: SyncContext, stats: RunStats, options: VerifyOptions): Promise<VerifyResult> {
  const asOf = (await readAsOf(ctx.store))?.asOf ?? null;
  const candidates: Candidate[] = [];
  const checked: Record<string, number> = {};
  const unlisted = new Map<RecordEntity, Unlisted>();
  for (const entity of RECORD_ENTITIES) checked[entity.plural] = await verifyRecords(ctx, entity, candidates, unlisted);
  const pipelines = await verifyPipelines(ctx, candidates);
  checked.pipelines = pipelines.length;
  const recent: RecentChanges =
    asOf === null ? { byRecord: new Map(), deals: false, leaving: new Set(), truncated: false } : await changesSince(ctx, asOf);
  let readById = 0;
  for (const [entity, listing] of unlisted) readById += await judgeUnlisted(ctx, entity, listing, recent, asOf, candidates);
  const first = classify(candidates, asOf, recent);
  const drift = first.drift.map((c) => c.drift);
  let inFlight: InFlight[] = first.inFlight.map((c) => ({ ...c.drift, changedAt: c.changedAt }));
  let lastAsOf = asOf;
  const settleMs = options.settleMs ?? 10_000;
  if (first.inFlight.length > 0 && settleMs > 0) {
    const times = first.inFlight.flatMap((c) => (c.changedAt === null ? [] : [Date.parse(c.changedAt)]));
    lastAsOf = await awaitAsOf(ctx, Math.max(...times, 0), { settleMs, stallMs: options.stallMs });
    const second = await secondLook(ctx, first.inFlight, lastAsOf);
    drift.push(...second.drift);
    inFlight = second.still;
  }
  const repaired = options.repair ? (await runVerifyRepair(ctx, stats, repairTarget([...drift, ...inFlight]), pipelines)).reread : 0;
  return { checked, asOf: lastAsOf, drift, inFlight, readById, changeLogTruncated: recent.truncated, repaired };
}

/**
 * One entity type's listing against the mirror; returns how many items it checked. What the list
 * did not show, and what matched, go to `unlisted`, judged once the change log is read.
 */
async function verifyRecords(
  ctx: SyncContext,
  entity: RecordEntity,
  out: Candidate[],
  unlisted: Map<RecordEntity, Unlisted>,
): Promise<number> {
  const { client, store } = ctx;
  const entityType = entity.type;
  const mirrored = await store.mirroredVersions(entityType);
  const seen = new Set<string>();
  const drift = { push: (d: Drift) => out.push({ drift: d, before: mirrored.get(d.entityId) ?? null }) };
  const matched: Unlisted['matched'] = [];
  let checked = 0;
  for await (const page of client.iterateList(entity.list, { limit: ctx.config.pageSize })) {
    const current: ListedRecord[] = [];
    for (const item of page.items) {
      seen.add(item.id);
      const mine = mirrored.get(item.id);
      if (!mine || mine.deletedAt !== null) {
        drift.push({ entityType, entityId: item.id, kind: 'missing', upstream: item.updatedAt, mirror: mine?.updatedAt ?? null });
      } else if (Date.parse(mine.updatedAt) !== Date.parse(item.updatedAt)) {
        drift.push({ entityType, entityId: item.id, kind: 'outdated', upstream: item.updatedAt, mirror: mine.updatedAt });
      } else current.push(item);
    }
    const differences = await store.recordDifferences(entity.type, current);
    for (const [id, diffs] of differences)
      out.push({ drift: contentDrift(entityType, id, diffs), before: mirrored.get(id) ?? null, listed: current.find((i) => i.id === id) });
    for (const item of current) if (!differences.has(item.id)) matched.push({ entityId: item.id, updatedAt: item.updatedAt });
    for (const bad of page.invalid) {
      if (bad.id) seen.add(bad.id);
      if (bad.id && !mirrored.has(bad.id)) drift.push({ entityType, entityId: bad.id, kind: 'missing', upstream: null, mirror: null });
    }
    checked += page.items.length + page.invalid.length;
  }
  const listing: Unlisted = { absent: [], matched };
  for (const [id, mine] of mirrored)
    if (mine.deletedAt === null && !seen.has(id)) listing.absent.push({ entityId: id, updatedAt: mine.updatedAt });
  unlisted.set(entity, listing);
  return checked;
}

/** Pipelines and stages as listed, and each pipeline's dealCount against the deals mirrored; returns the listing. */
async function verifyPipelines(ctx: SyncContext, out: Candidate[]): Promise<Pipeline[]> {
  const { items: pipelines } = await ctx.client.listPipelines();
  const drift = { push: (d: Drift) => out.push({ drift: d, before: null }) };
  const counts = await ctx.store.pipelineDealCounts();
  for (const p of pipelines) {
    const mine = counts.get(p.id) ?? 0;
    if (mine !== p.dealCount)
      drift.push({ entityType: 'pipeline', entityId: p.id, kind: 'deal_count', upstream: p.dealCount, mirror: mine });
  }
  for (const d of await ctx.store.pipelineDifferences(pipelines)) {
    if (d.missing) drift.push({ entityType: d.entityType, entityId: d.entityId, kind: 'missing', upstream: d.expected, mirror: null });
    else drift.push(contentDrift(d.entityType, d.entityId, [d]));
  }
  return pipelines;
}
