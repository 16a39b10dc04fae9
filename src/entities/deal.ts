import { DEAL_LIST, DEAL_READ, type Deal } from '../api/index.js';
import { entityNames, type BuiltInEntity } from './entity.js';
import { stageKey } from './pipeline.js';
import { childTable, col, fieldsTable, historyTable, key, recordTable } from './table-decl.js';

const text = col('text');
const json = col('json');

const deals = recordTable('deals', {
  name: text,
  amount: col('numeric'),
  amount_cents: col('bigint'),
  currency: text,
  close_date: col('date'),
  status: text,
  pipeline_id: text,
  stage_id: text,
  owner_id: text,
  company_id: text,
  fields_json: json,
});

const deal_contacts = childTable({ deal_id: key('text'), contact_id: key('text'), is_primary: col('boolean'), position: col('integer') }, [
  'deal_id',
  'contact_id',
]);

/** A deal's names, and its tables (docs/schema.md): the record, its contacts and custom fields, and its history. */
const names = entityNames('deal', 'deals', {
  deals,
  deal_contacts,
  deal_fields: fieldsTable('deal_id'),
  deal_history: historyTable('deal_id', 'deal_history'),
});

/** Deals: a list item is the whole record; a deal names a stage of the pipelines' reference data. */
export const deal: BuiltInEntity<Deal, Deal, typeof names> = {
  ...names,
  list: DEAL_LIST,
  single: DEAL_READ,
  childTables: ['deal_contacts', 'deal_fields'],
  tracked: [
    { field: 'stage_id', name: 'stage', value: 'id', implied: ['pipeline'] },
    { field: 'amount', name: 'amount', value: 'amount' },
    // An amount means nothing without its currency: a past currency stands in the versions as it stood.
    { field: 'currency', name: 'currency', value: 'text' },
    { field: 'close_date', name: 'closeDate', value: 'date' },
    { field: 'owner_id', name: 'owner', value: 'id' },
    // A deal's status follows its stage upstream; a server may still log it on its own.
    { field: 'status', name: 'status', value: 'text', follows: 'stage_id' },
  ],
  metricLabel: 'deal',
  touchesUnlisted: () => false,
  listable: () => true,

  fromList: (_store, items) => Promise.resolve({ copies: items.map((d) => ({ id: d.id, record: d })), readById: [] }),
  requires: (record) => stageKey(record.pipeline.id, record.stage.id),
};
