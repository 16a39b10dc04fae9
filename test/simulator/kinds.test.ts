import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSimKind, type SimKind, type SimRecord, type SimWorld } from '../../src/simulator/index.js';
import { eventChanges } from '../../src/simulator/change-log.js';
import { simKinds } from '../../src/simulator/kinds.js';
import { World } from '../../src/simulator/world.js';
import { start, START, type Client, type Wire } from './helpers.js';

interface Note extends SimRecord {
  text: string;
  gone: boolean;
}

const body = (n: Note) => JSON.stringify({ note: { id: n.id, text: n.text, updatedAt: new Date(n.updatedAtMs).toISOString() } });

/** One write of a note through the kind table, logged as `type` with `payload`. */
const write = (world: SimWorld, n: Note, change: (n: Note) => void, type: string, payload: object) =>
  world.writeRecord('note', n, body, change, { type, payload });

/** A kind the simulator's source does not know, served only through the table (src/simulator/kinds.ts). */
const noteKind: SimKind<Note> = {
  name: 'note',
  collection: 'notes',
  served: (n) => !n.gone,
  dedicatedTypes: { text: 'note.text_changed' },
  setCorruption: () => {
    throw new Error('notes are never served corrupt');
  },
  route(world, req, id) {
    const notes = world.kinds.of('note');
    const found = id === undefined ? undefined : (notes.records.get(id) as Note | undefined);
    const text = (req.body as { text?: string } | undefined)?.text ?? '';
    if (id === undefined && req.method === 'POST') {
      const n: Note = { id: world.ids.next('note'), text: '', updatedAtMs: 0, keyHistory: [], corrupt: null, gone: false };
      notes.add(n);
      write(world, n, (x) => (x.text = text), 'note.created', {});
      return { status: 201, body: body(n) };
    }
    if (id === undefined)
      return {
        status: 200,
        body: JSON.stringify({ notes: notes.index.newestFirst().map((n) => JSON.parse(body(n as Note)).note), nextCursor: null }),
      };
    if (!found || found.gone) return { status: 404, body: '{"error":{"code":"not_found","message":"no such note"}}' };
    if (req.method === 'PATCH') write(world, found, (x) => (x.text = text), 'note.text_changed', { from: found.text, to: text });
    else if (req.method === 'DELETE') write(world, found, (x) => (x.gone = true), 'note.deleted', {});
    return { status: 200, body: body(found) };
  },
};

/**
 * The simulator's kind table: a kind registered from outside src/ is served like a ticket or a
 * deal (list, read, writes, the change log's field changes), and a kind the table lacks fails
 * loudly instead of being filed as another.
 */
describe('simulator record kinds', () => {
  let c: Client;
  beforeAll(async () => {
    registerSimKind(noteKind);
    c = await start({ tickets: 3, deals: 2, seed: 9 });
  });
  afterAll(() => c.sim.close());

  it('serves a registered kind: list, read, update and delete, with its changes in the truth', async () => {
    const a = (await c.send('POST', '/api/v1/notes', { text: 'first' })).body.note;
    const b = (await c.send('POST', '/api/v1/notes', { text: 'second' })).body.note;
    expect((await c.send('PATCH', `/api/v1/notes/${a.id}`, { text: 'first, edited' })).status).toBe(200);
    expect((await c.send('DELETE', `/api/v1/notes/${b.id}`)).status).toBe(200);

    const listed = (await c.get('/api/v1/notes')).body.notes as Wire[];
    expect(listed.map((n) => [n.id, n.text])).toEqual([[a.id, 'first, edited']]);
    expect((await c.get(`/api/v1/notes/${b.id}`)).status).toBe(404);
    const truth = c.sim.control.truth();
    expect(truth.changes.filter((ch) => (ch.entityType as string) === 'note')).toEqual([
      expect.objectContaining({ entityId: a.id, field: 'text', from: 'first', to: 'first, edited' }),
    ]);
    const events = (await c.pageAll('/api/v1/events?entityType=note', 'events')).map((e: Wire) => e.type);
    expect(events.sort()).toEqual(['note.created', 'note.created', 'note.deleted', 'note.text_changed']);
  });

  it('a kind registered twice, or a control call naming an unknown kind, fails naming the table', () => {
    expect(() => registerSimKind(noteKind)).toThrow(/already registered/);
    expect(() => c.sim.control.corrupt('widget' as 'ticket', 'w-1')).toThrow(
      /no record kind "widget" is registered \(known: ticket, deal, note\)/,
    );
  });

  it('a write or a logged change of an unknown kind throws instead of being filed as a deal', () => {
    const world = new World(
      {
        seed: 1,
        startMs: START.getTime(),
        realTime: false,
        autoAssignOnReply: false,
        autoCloseSolvedAfterMs: 0,
        dialect: c.sim.control.dialect(),
      },
      simKinds(),
    );
    const rec = { id: 'w-1', updatedAtMs: 0, keyHistory: [], corrupt: null };
    expect(() => world.commitWrite('widget', rec, 1)).toThrow(/no record kind "widget"/);
    expect(() => world.beginWrite('widget', rec, () => Buffer.from('{}'))).toThrow(/no record kind "widget"/);
    const e = world.emit('widget.updated', 'widget', 'w-1', {}, null, 1);
    // An entity without field changes (a contact's activity) logs none ...
    expect(eventChanges(world, e)).toEqual([]);
    // ... but a write that kept changes for a kind the world does not serve is a bug of the simulator's own.
    e.changes = [{ field: 'size', from: 1, to: 2 }];
    expect(() => eventChanges(world, e)).toThrow(/no record kind "widget"/);
  });
});
