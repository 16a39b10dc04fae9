/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Truth } from '../../src/simulator/index.js';
import type { Store } from '../../src/store/index.js';
import { unreadableRecords, type Kind } from '../helpers/truth-history.js';
import {
  customFieldRows,
  customFieldTypes,
  dailyRows,
  goneFrom,
  lives,
  mirrorRows,
  oracleJson,
  TRACKED_COLUMNS,
  versionRows,
  type Life,
} from './bi-oracle.js';
import { rows } from './oracle.js';

const KINDS: readonly Kind[] = ['ticket', 'deal'];

export interface BiCompareOptions {
  now: string;
  windowDays: number;
  /** Deleted records as last seen before their deletion (the truth no longer lists them). */
  gone?: readonly Life[];
  /** Every truth a sync saw (the custom field types are those of every value seen); default: the final truth. */
  snapshots?: readonly Truth[];
  /** Leave out the mirror's rows of records the oracle does not know (deleted ones no snapshot saw). */
  onlyKnown?: boolean;
}

/** Lines of `want` missing from `got` and the reverse, labelled. */
function setDiff(label: string, got: readonly string[], want: readonly string[]): string[] {
  const g = new Set(got);
  const w = new Set(want);
  return [
    ...want.filter((x) => !g.has(x)).map((x) => `${label} lacks ${x}`),
    ...got.filter((x) => !w.has(x)).map((x) => `${label} has ${x}`),
  ];
}

/**
 * Where the log hides a record's changes (an opaque dialect), a client knows its flag, its days
 * and its current state only: the other values of such a record are not compared.
 */
function knowable(list: readonly any[], hidden: ReadonlyMap<string, string[]>, current: (r: any) => boolean, keep: readonly string[]) {
  return list.map((r) => {
    if (!hidden.has(`${r.kind}:${r.id}`) || current(r)) return r;
    return Object.fromEntries(Object.entries(r).filter(([k]) => keep.includes(k)));
  });
}

/** The mirror's rows of a table as objects, optionally only those of records in `known`. */
async function mirrorObjects(store: Store, kind: Kind, table: string, cols: readonly string[], known: ReadonlySet<string> | null) {
  const list = (await mirrorRows(store, table, `${kind}_id`, cols, kind)).map((j) => JSON.parse(j));
  return known ? list.filter((r) => known.has(`${kind}:${r.id}`)) : list;
}

async function compareVersions(store: Store, truth: Truth, all: readonly Life[], known: ReadonlySet<string> | null): Promise<string[]> {
  const hidden = unreadableRecords(truth);
  const out: string[] = [];
  for (const kind of KINDS) {
    const cols = ['valid_from', 'valid_to', ...TRACKED_COLUMNS[kind], 'source', 'complete'];
    // A hidden record's versions are the mirror's guess of when things changed: only the current one is knowable.
    const open = (r: any) => r.valid_to === null;
    const pick = (list: any[]) =>
      list
        .filter((r) => !hidden.has(`${kind}:${r.id}`) || open(r))
        .map((r) => (hidden.has(`${kind}:${r.id}`) ? { ...r, valid_from: '?', source: '?' } : r));
    const want = pick(
      versionRows(
        truth,
        all.filter((l) => l.kind === kind),
      ),
    );
    const got = pick(await mirrorObjects(store, kind, `rpt_${kind}_versions`, cols, known));
    out.push(...setDiff(`rpt_${kind}_versions`, oracleJson(got, cols, true), oracleJson(want, cols, true)));
  }
  return out;
}

async function compareDaily(store: Store, truth: Truth, all: readonly Life[], o: BiCompareOptions, known: ReadonlySet<string> | null) {
  const { now, windowDays } = o;
  const hidden = unreadableRecords(truth);
  const today = now.slice(0, 10);
  const out: string[] = [];
  for (const kind of KINDS) {
    const cols = ['day', ...TRACKED_COLUMNS[kind], 'history_complete'];
    const keep = ['kind', 'id', 'day', 'history_complete'];
    const want = knowable(
      dailyRows(
        truth,
        all.filter((l) => l.kind === kind),
        now,
        windowDays,
      ),
      hidden,
      (r) => r.day === today,
      keep,
    );
    const got = knowable(await mirrorObjects(store, kind, `rpt_${kind}_daily`, cols, known), hidden, (r) => r.day === today, keep);
    out.push(...setDiff(`rpt_${kind}_daily`, oracleJson(got, cols, true), oracleJson(want, cols, true)));
  }
  return out;
}

async function compareCustomFields(store: Store, truth: Truth, snapshots: readonly Truth[], onlyKnown: boolean): Promise<string[]> {
  const out: string[] = [];
  for (const kind of KINDS) {
    const types = customFieldTypes(kind, snapshots);
    const catalog = await rows(store, `SELECT key, column_name, type FROM rpt_custom_field_columns WHERE entity_type = '${kind}'`);
    // Without every snapshot, keys only records gone since had are the catalog's own business.
    const typed = catalog.filter((c) => c.type !== null && (!onlyKnown || types.has(c.key as string)));
    out.push(
      ...setDiff(
        `rpt_custom_field_columns (${kind})`,
        typed.map((c) => `${c.key}:${c.type}`).sort(),
        [...types].map(([k, t]) => `${k}:${t}`).sort(),
      ),
    );
    // The simulator's keys are plain lower-case words: each is its own column name.
    for (const c of typed) if (c.column_name !== c.key) out.push(`${kind} key ${c.key} has column ${c.column_name}`);
    const keys = [...types.keys()];
    const got = (await rows(store, `SELECT * FROM rpt_${kind}_custom_fields`))
      .map((r) =>
        JSON.stringify({ id: r[`${kind}_id`], ...Object.fromEntries(keys.map((k) => [k, r[k] === undefined ? 'no column' : r[k]])) }),
      )
      .sort();
    const want = customFieldRows(kind, truth, types)
      .map((r) => JSON.stringify({ id: r.id, ...Object.fromEntries(keys.map((k) => [k, r[k]])) }))
      .sort();
    out.push(...setDiff(`rpt_${kind}_custom_fields`, got, want));
  }
  return out;
}

/** Every difference of the custom field, versions and daily tables from the truth (empty when exact). */
export async function compareBiTables(store: Store, truth: Truth, o: BiCompareOptions): Promise<string[]> {
  const seen = new Set((o.gone ?? []).map((g) => `${g.kind}:${g.record.id}`));
  const gone = [...(o.gone ?? []), ...goneFrom(o.snapshots ?? [], truth).filter((g) => !seen.has(`${g.kind}:${g.record.id}`))];
  const all = lives(truth, gone);
  const known = o.onlyKnown ? new Set(all.map((l) => `${l.kind}:${l.record.id}`)) : null;
  return [
    ...(await compareCustomFields(store, truth, o.snapshots ?? [truth], o.onlyKnown ?? false)),
    ...(await compareVersions(store, truth, all, known)),
    ...(await compareDaily(store, truth, all, o, known)),
  ];
}
