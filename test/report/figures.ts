/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Truth } from '../../src/simulator/index.js';
import type { Store } from '../../src/store/index.js';
import { unreadableRecords } from '../helpers/truth-history.js';
import { rows } from './oracle.js';
import { agentDaily, dealFigures, salesAggregates, supportDaily, ticketFigures } from './truth-oracle.js';

/**
 * Every workspace rpt_ table in one comparable form, from a mirror or from the truth oracle: rows
 * as JSON of the oracle's columns, sorted. Where the log hides changes (an opaque dialect), only
 * what a client can know is compared: an incomplete record's history-free figures (docs/schema.md,
 * "figures that use no history are exact either way", and its flag), no interval rows of it, and
 * the aggregates' history-free columns; everything else stays exact.
 */

export const WORKSPACE_TABLES = [
  'rpt_tickets',
  'rpt_ticket_status_intervals',
  'rpt_support_daily',
  'rpt_agent_daily',
  'rpt_deals',
  'rpt_deal_stage_intervals',
  'rpt_pipeline_stages',
  'rpt_sales_monthly',
] as const;
export type Table = (typeof WORKSPACE_TABLES)[number];
export type Figures = Record<Table, string[]>;

/** Columns that use no history (docs/schema.md), per table; aggregates keep rows that count something history-free. */
const HISTORY_FREE: Record<Table, readonly string[]> = {
  rpt_tickets: [
    'ticket_id',
    'status',
    'assignee_id',
    'tags',
    'first_reply_minutes',
    'public_agent_replies',
    'internal_notes',
    'customer_messages',
    'is_one_touch',
    'first_reply_sla',
    'first_reply_sla_at',
    'age_minutes',
    'history_complete',
  ],
  rpt_ticket_status_intervals: [],
  rpt_support_daily: [
    'day',
    'created',
    'first_replies',
    'first_reply_median_minutes',
    'first_reply_p90_minutes',
    'first_reply_sla_achieved',
    'first_reply_sla_breached',
  ],
  rpt_agent_daily: ['agent_id', 'day', 'public_replies', 'internal_notes', 'tickets_touched'],
  rpt_deals: ['deal_id', 'status', 'stage_id', 'amount_cents', 'currency', 'owner_id', 'days_open', 'history_complete'],
  rpt_deal_stage_intervals: [],
  rpt_pipeline_stages: ['pipeline_id', 'stage_id', 'currency', 'open_deals', 'total_amount_cents'],
  rpt_sales_monthly: ['month', 'pipeline_id', 'owner_id', 'currency', 'deals_created'],
};

const KIND_OF: Partial<Record<Table, ['ticket' | 'deal', string]>> = {
  rpt_tickets: ['ticket', 'ticket_id'],
  rpt_ticket_status_intervals: ['ticket', 'ticket_id'],
  rpt_deals: ['deal', 'deal_id'],
  rpt_deal_stage_intervals: ['deal', 'deal_id'],
};

/** Rows an aggregate keeps when only history-free columns are compared (a row made only by history is unknowable). */
const KEEP_ROW: Partial<Record<Table, (r: any) => boolean>> = {
  rpt_agent_daily: (r) => r.public_replies + r.internal_notes > 0,
  rpt_sales_monthly: (r) => r.deals_created > 0,
};

/** The oracle's rows of every table. */
export function oracleRows(truth: Truth, now: string): Record<Table, any[]> {
  const tf = ticketFigures(truth, now);
  const df = dealFigures(truth, now);
  const sa = salesAggregates(truth, now);
  return {
    rpt_tickets: tf.tickets,
    rpt_ticket_status_intervals: tf.intervals,
    rpt_support_daily: supportDaily(truth, now),
    rpt_agent_daily: agentDaily(truth, now),
    rpt_deals: df.deals,
    rpt_deal_stage_intervals: df.intervals,
    rpt_pipeline_stages: sa.pipelineStages,
    rpt_sales_monthly: sa.monthly,
  };
}

/** What the oracle and a mirror are compared on: per table, per row, the columns a client can know. */
function comparable(table: Table, list: any[], columns: readonly string[], hidden: ReadonlyMap<string, string[]>): string[] {
  const kind = KIND_OF[table];
  const out: string[] = [];
  for (const r of list) {
    let cols = columns;
    if (kind) {
      if (hidden.has(`${kind[0]}:${r[kind[1]]}`)) cols = HISTORY_FREE[table];
    } else if (hidden.size > 0) {
      if (KEEP_ROW[table] && !KEEP_ROW[table](r)) continue;
      cols = HISTORY_FREE[table];
    }
    if (cols.length === 0) continue;
    out.push(JSON.stringify(Object.fromEntries(cols.map((c) => [c, r[c]]))));
  }
  return out.sort();
}

/** The oracle's columns of each table (its row keys without the `_` helpers); empty when the oracle has no row. */
function columnsOf(list: any[]): string[] {
  return list.length === 0 ? [] : Object.keys(list[0]).filter((k) => !k.startsWith('_'));
}

/** The oracle's figures and a mirror's, in the same comparable form (compare them per table). */
export async function figures(store: Store, truth: Truth, now: string): Promise<{ mirror: Figures; truth: Figures }> {
  const want = oracleRows(truth, now);
  const hidden = unreadableRecords(truth);
  const mirror = {} as Figures;
  const expected = {} as Figures;
  for (const table of WORKSPACE_TABLES) {
    const columns = columnsOf(want[table]);
    const got = await rows(store, `SELECT * FROM ${table}`);
    // With no oracle row, any mirror row is a difference: each shows as an empty object.
    mirror[table] = columns.length === 0 ? got.map(() => '{}') : comparable(table, got, columns, hidden);
    expected[table] = comparable(table, want[table], columns, hidden);
  }
  return { mirror, truth: expected };
}

/**
 * For every record the mirror calls incomplete, the event its reason names; the caller compares
 * them with the events that hide changes (`unreadableRecords`).
 */
export async function incompleteReasons(store: Store): Promise<Map<string, string>> {
  const q = `SELECT 'ticket:' || ticket_id AS k, history_complete AS c, history_incomplete_reason AS r FROM rpt_tickets
    UNION ALL SELECT 'deal:' || deal_id, history_complete, history_incomplete_reason FROM rpt_deals`;
  const out = new Map<string, string>();
  for (const r of await rows(store, q)) if (Number(r.c) === 0) out.set(r.k as string, String(r.r));
  return out;
}
