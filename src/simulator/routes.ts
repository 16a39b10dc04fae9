import { createDeal, deleteDeal, findDeal, updateDeal } from './deal-ops.js';
import { ApiError, notFound } from './errors.js';
import { listDeals, listEvents, listTickets } from './queries.js';
import { dealBody, deletedBody, pipelinesBody, replyBody, ticketBody } from './render.js';
import { addMessage, createTicket, findListedTicket, updateTicket } from './ticket-ops.js';
import type { World } from './world.js';

export interface ApiRequest {
  method: string;
  /** Path segments after /api/v1, URL-decoded. */
  segments: string[];
  query: Record<string, string>;
  /** Parsed JSON body (undefined when empty). */
  body: unknown;
  /** Member id of the API key. */
  actor: string;
  /** Serve the previous version of a single record, or of every item of a list page (stale-read fault). */
  stale: boolean;
  /** Serve change-log pages oldest first (the `eventPageOrder` fault). */
  oldestFirst: boolean;
}

export interface ApiResponse {
  status: number;
  body: string | Buffer;
}

function json(status: number, body: string | Buffer): ApiResponse {
  return { status, body };
}

function methodNotAllowed(allowed: string[]): ApiError {
  return new ApiError(405, 'method_not_allowed', `Use ${allowed.join(' or ')} on this path.`, undefined, { allow: allowed.join(', ') });
}

/** The workspace API's twelve endpoints: the six wsmirror reads (docs/upstream.md, "Endpoints read") and the writes (docs/simulator.md). */
export function route(world: World, req: ApiRequest): ApiResponse {
  const [collection, id, sub, ...rest] = req.segments;
  const m = req.method;
  if (rest.length > 0) throw new ApiError(404, 'not_found', 'No such API path.');
  switch (collection) {
    case 'tickets':
      if (id === undefined) {
        if (m === 'GET') return json(200, listTickets(world, req.query, req.stale));
        if (m === 'POST') {
          const t = createTicket(world, req.actor, req.body);
          return json(201, ticketBody(world, t));
        }
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
      if (sub === 'messages') {
        if (m !== 'POST') {
          findListedTicket(world, id);
          throw methodNotAllowed(['POST']);
        }
        const r = addMessage(world, req.actor, id, req.body);
        return json(201, replyBody(world, r.message, r.ticket));
      }
      break;
    case 'pipelines':
      if (id !== undefined) break;
      if (m !== 'GET') throw methodNotAllowed(['GET']);
      return json(200, pipelinesBody(world));
    case 'deals':
      if (sub !== undefined) break;
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
    case 'events':
      if (id !== undefined) break;
      if (m !== 'GET') throw methodNotAllowed(['GET']);
      return json(200, listEvents(world, req.query, req.oldestFirst));
  }
  throw new ApiError(404, 'not_found', 'No such API path.');
}
