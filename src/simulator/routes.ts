import { ApiError } from './errors.js';
import { listEvents } from './queries.js';
import { pipelinesBody } from './render.js';
import type { ApiRequest, ApiResponse } from './types.js';
import type { World } from './world.js';

export type { ApiRequest, ApiResponse };

export function json(status: number, body: string | Buffer): ApiResponse {
  return { status, body };
}

export function methodNotAllowed(allowed: string[]): ApiError {
  return new ApiError(405, 'method_not_allowed', `Use ${allowed.join(' or ')} on this path.`, undefined, { allow: allowed.join(', ') });
}

/**
 * The workspace API's endpoints: each record kind's (src/simulator/kinds.ts), the pipelines and the
 * change log (docs/upstream.md, "Endpoints read"; docs/simulator.md for the writes).
 */
export function route(world: World, req: ApiRequest): ApiResponse {
  const [collection, id, sub, ...rest] = req.segments;
  const m = req.method;
  if (rest.length > 0) throw noSuchPath();
  const kind = world.kinds.byCollection(collection);
  if (kind) return kind.kind.route(world, req, id, sub);
  switch (collection) {
    case 'pipelines':
      if (id !== undefined) break;
      if (m !== 'GET') throw methodNotAllowed(['GET']);
      return json(200, pipelinesBody(world));
    case 'events':
      if (id !== undefined) break;
      if (m !== 'GET') throw methodNotAllowed(['GET']);
      return json(200, listEvents(world, req.query, req.oldestFirst));
  }
  throw noSuchPath();
}

export function noSuchPath(): ApiError {
  return new ApiError(404, 'not_found', 'No such API path.');
}
