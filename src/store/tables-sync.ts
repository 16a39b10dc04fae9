import { col, key, type ColumnDecl, type TableDecl } from '../entities/table-decl.js';
import { TABLES } from './tables.js';

/**
 * The mirror's other tables, declared as the record types declare theirs (src/entities/table-decl.ts):
 * the people and pipelines the records name, and the sync's own bookkeeping. `DECLARED_TABLES` is
 * every declaration of the mirror (the record types', src/store/tables.ts's and these);
 * test/store/declared-schema.test.ts holds each to the migrated schema on both databases and
 * names every table of that schema left undeclared, with its reason.
 */

const text = col('text');
const ts = col('timestamp');
const int = col('integer');
/** A serial key: bigserial in PostgreSQL, the rowid in SQLite. */
const serial = { type: 'bigint', nullable: false, generated: true } as const;

/** A table keyed by its id alone, with no index beyond its key. */
const byId = <C extends Record<string, ColumnDecl>>(columns: C) => ({
  columns: { id: key('text'), ...columns },
  primaryKey: ['id'] as const,
  indexes: [] as const,
});

// References are partial views of a person or company (src/store/refs.ts): every value may be missing.
const users = byId({ name: text, email: text }) satisfies TableDecl;
const contacts = byId({ first_name: text, last_name: text, email: text }) satisfies TableDecl;
const companies = byId({ name: text, domain: text }) satisfies TableDecl;

const pipelines = {
  columns: { id: key('text'), name: text, deal_count: int, position: int, raw_json: col('json') },
  primaryKey: ['id'],
  indexes: [],
} as const satisfies TableDecl;

/** Keyed by (pipeline_id, id) since 0700_owner_keyed_children: two pipelines may share a stage id. */
const stages = {
  ...byId({ pipeline_id: key('text'), name: text, position: int, is_won: col('boolean'), is_lost: col('boolean'), raw_json: col('json') }),
  primaryKey: ['pipeline_id', 'id'],
} as const satisfies TableDecl;

/** Records the mirror could not store, with why (docs/schema.md, quarantine). */
const quarantine = {
  columns: {
    entity_type: key('text'),
    entity_id: key('text'),
    reason: key('text'),
    raw_json: key('json'),
    first_seen_at: key('timestamp'),
    last_seen_at: key('timestamp'),
  },
  primaryKey: ['entity_type', 'entity_id'],
  indexes: [
    {
      name: 'quarantine_last_seen_idx',
      columns: ['last_seen_at'],
      unique: false,
      why: 'the status page reads the newest 20 entries: without it, every load sorts the whole quarantine (0600)',
    },
  ],
} as const satisfies TableDecl;

const sync_runs = {
  columns: {
    id: serial,
    kind: key('text'),
    started_at: key('timestamp'),
    finished_at: ts,
    /** `running` until finished, then `success`, `failed` or `aborted`. */
    outcome: text,
    events_read: int,
    events_new: int,
    records_fetched: int,
    requests: int,
    retries: int,
    error: text,
    /** Cycles this row stands for: idle polls of continuous mode fold into one row (migration 1100). */
    cycles: { type: 'integer', nullable: false, generated: true },
  },
  primaryKey: ['id'],
  indexes: [
    {
      name: 'sync_runs_started_at_idx',
      columns: ['started_at'],
      unique: false,
      why: "rpt_sync_health counts the last 24 hours' runs at every refresh (src/report/sync-health.ts)",
    },
    {
      name: 'sync_runs_kind_started_idx',
      columns: ['kind', 'started_at'],
      unique: false,
      why: "the status page's last verify or reconcile run: without it, a scan of every row, one per cycle, forever (0600)",
    },
  ],
} as const satisfies TableDecl;

const sync_state = {
  columns: {
    key: key('text'),
    /** JSON text, declared text (not jsonb) in PostgreSQL too since 0001: read back as written. */
    value_json: text,
    updated_at: ts,
  },
  primaryKey: ['key'],
  indexes: [],
} as const satisfies TableDecl;

/**
 * A change-log event that may hide a change of a tracked field but cannot be read as one (migration
 * 0900_history_gaps): its record's history is incomplete (docs/schema.md, history_gaps). Its
 * writer's ON CONFLICT names the primary key (src/store/history-gaps.ts).
 */
const history_gaps = {
  columns: {
    entity_type: key('text'),
    entity_id: key('text'),
    event_id: key('text'),
    event_type: text,
    occurred_at: key('timestamp'),
    /** The tracked fields it may hide, comma-separated (`stage_id,status`). */
    fields: key('text'),
    reason: key('text'),
  },
  primaryKey: ['entity_type', 'entity_id', 'event_id'],
  indexes: [],
} as const satisfies TableDecl;

/** The writer's inbox (migration 1600, src/store/writer-requests.ts): requests queued while another process writes. */
const writer_requests = {
  columns: {
    id: serial,
    kind: key('text'),
    /** JSON text, declared text in both databases (1600). */
    params_json: key('text'),
    requested_at: key('timestamp'),
    started_at: ts,
    finished_at: ts,
    /** Null until served, then `done` or `failed`. */
    outcome: text,
    result_json: text,
    error_code: text,
    error: text,
  },
  primaryKey: ['id'],
  indexes: [
    {
      name: 'writer_requests_pending_idx',
      columns: ['finished_at', 'id'],
      unique: false,
      why: 'the writer asks for the unfinished requests at every cycle (1600)',
    },
  ],
} as const satisfies TableDecl;

/** The tables beside the record tables of `TABLES`. */
export const SUPPORT_TABLES = {
  users,
  contacts,
  companies,
  pipelines,
  stages,
  quarantine,
  sync_runs,
  sync_state,
  history_gaps,
  writer_requests,
} as const satisfies Record<string, TableDecl>;

/** Every declared table of the mirror. */
export const DECLARED_TABLES = { ...TABLES, ...SUPPORT_TABLES } as const;
