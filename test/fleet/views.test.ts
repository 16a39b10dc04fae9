import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_SCHEMA, VIEWS_SCHEMA } from '../../src/fleet/config.js';
import { rebuildViews } from '../../src/fleet/views.js';
import { postgresDialect } from '../helpers/dialects.js';

/**
 * The cross-workspace views over tables whose columns differ between workspaces (a schema one
 * migration behind, a column another release typed otherwise): every column of every workspace,
 * NULL where a workspace lacks it, text where their types disagree. The custom field tables, whose
 * columns are each workspace's own keys, have no view.
 */
describe.skipIf(postgresDialect === null)('wsmirror_all over workspaces whose columns differ (PostgreSQL only: a fleet needs it)', () => {
  let drop: () => Promise<void>;
  let pool: pg.Pool;

  beforeAll(async () => {
    const target = await postgresDialect!.newDatabase();
    drop = target.drop;
    pool = new pg.Pool({ connectionString: target.database, max: 2 });
    await pool.query(`
      create schema ${FLEET_SCHEMA};
      create table ${FLEET_SCHEMA}.workspaces (id text primary key, schema_name text not null, migrated boolean not null);
      insert into ${FLEET_SCHEMA}.workspaces values ('a', 'wa', true), ('b', 'wb', true);
      create schema wa; create schema wb;
      create table wa.rpt_tickets (ticket_id text primary key, plan text, seats double precision);
      create table wa.rpt_ticket_custom_fields (ticket_id text primary key);
      create table wb.rpt_tickets (ticket_id text primary key, seats text, renewal date);
      insert into wa.rpt_tickets values ('t1', 'gold', 12.5);
      insert into wb.rpt_tickets values ('t2', 'a dozen', '2026-03-01');`);
  });

  afterAll(async () => {
    await pool?.end();
    await drop?.();
  });

  it('unions every column, NULL where absent and text where the types disagree', async () => {
    const c = await pool.connect();
    try {
      await rebuildViews(c);
    } finally {
      c.release();
    }
    const { rows } = await pool.query(
      `select workspace_id, ticket_id, plan, seats, renewal::text as renewal from ${VIEWS_SCHEMA}.rpt_tickets order by workspace_id`,
    );
    expect(rows).toEqual([
      { workspace_id: 'a', ticket_id: 't1', plan: 'gold', seats: '12.5', renewal: null },
      { workspace_id: 'b', ticket_id: 't2', plan: null, seats: 'a dozen', renewal: '2026-03-01' },
    ]);
    const types = await pool.query<{ column_name: string; data_type: string }>(
      `select column_name, data_type from information_schema.columns where table_schema = $1 and table_name = 'rpt_tickets' order by ordinal_position`,
      [VIEWS_SCHEMA],
    );
    expect(types.rows.map((r) => `${r.column_name} ${r.data_type}`)).toEqual([
      'workspace_id text',
      'ticket_id text',
      'plan text',
      'seats text',
      'renewal date',
    ]);
    const views = await pool.query(`select table_name from information_schema.views where table_schema = $1 order by 1`, [VIEWS_SCHEMA]);
    expect(views.rows).toEqual([{ table_name: 'rpt_tickets' }]);
  });
});
