import { createDeal, deleteDeal, findDeal, setDealCorruption, updateDeal } from './deal-ops.js';
import { notFound } from './errors.js';
import type { Deal, Listed, Ticket } from './model.js';
import { listDeals, listTickets } from './queries.js';
import { dealBody, deletedBody, replyBody, ticketBody } from './render.js';
import { json, methodNotAllowed, noSuchPath } from './routes.js';
import type { SimKind } from './world.js';
import { setTicketCorruption } from './ticket-lifecycle.js';
import { addMessage, createTicket, findListedTicket, updateTicket } from './ticket-ops.js';

export type { SimKind } from './world.js';

const ticketKind: SimKind<Ticket> = {
  name: 'ticket',
  collection: 'tickets',
  served: (t) => t.hidden === null,
  dedicatedTypes: { priority: 'ticket.priority_changed', assigneeId: 'ticket.assigned', status: 'ticket.status_changed' },
  setCorruption: setTicketCorruption,
  route(world, req, id, sub) {
    const m = req.method;
    if (id === undefined) {
      if (m === 'GET') return json(200, listTickets(world, req.query, req.stale));
      if (m === 'POST') return json(201, ticketBody(world, createTicket(world, req.actor, req.body)));
      throw methodNotAllowed(['GET', 'POST']);
    }
    if (sub === undefined) {
      if (m === 'GET') {
        const t = world.tickets.get(id);
        if (!t || t.hidden !== null) throw notFound('ticket', id);
        return json(200, req.stale && t.prevBody ? t.prevBody : ticketBody(world, t));
      }
      if (m === 'PATCH') return json(200, ticketBody(world, updateTicket(world, req.actor, id, req.body)));
      throw methodNotAllowed(['GET', 'PATCH']);
    }
    if (sub !== 'messages') throw noSuchPath();
    if (m !== 'POST') {
      findListedTicket(world, id);
      throw methodNotAllowed(['POST']);
    }
    const r = addMessage(world, req.actor, id, req.body);
    return json(201, replyBody(world, r.message, r.ticket));
  },
};

const dealKind: SimKind<Deal> = {
  name: 'deal',
  collection: 'deals',
  served: (d) => !d.deleted,
  dedicatedTypes: { stageId: 'deal.stage_changed' },
  setCorruption: setDealCorruption,
  route(world, req, id, sub) {
    const m = req.method;
    if (sub !== undefined) throw noSuchPath();
    if (id === undefined) {
      if (m === 'GET') return json(200, listDeals(world, req.query, req.stale));
      if (m === 'POST') return json(201, dealBody(world, createDeal(world, req.actor, req.body)));
      throw methodNotAllowed(['GET', 'POST']);
    }
    if (m === 'GET') {
      const d = findDeal(world, id);
      return json(200, req.stale && d.prevBody ? d.prevBody : dealBody(world, d));
    }
    if (m === 'PATCH') return json(200, dealBody(world, updateDeal(world, req.actor, id, req.body)));
    if (m === 'DELETE') {
      deleteDeal(world, req.actor, id);
      return json(200, deletedBody(world));
    }
    throw methodNotAllowed(['GET', 'PATCH', 'DELETE']);
  },
};

const registered: SimKind[] = [];

/**
 * Adds a record kind to every simulator started after this call (a test's fixture entity): its
 * records, list, reads, writes and change-log events are then served like a ticket's or a deal's.
 */
export function registerSimKind<R extends Listed>(kind: SimKind<R>): void {
  if (simKinds().some((k) => k.name === kind.name || k.collection === kind.collection))
    throw new Error(`simulator: a record kind named ${kind.name} or served under /${kind.collection} is already registered`);
  registered.push(kind);
}

/** Every record kind a simulator serves: tickets, deals, then the registered ones. */
export function simKinds(): readonly SimKind[] {
  return [ticketKind, dealKind, ...registered];
}
