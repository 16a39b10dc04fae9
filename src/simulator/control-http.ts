import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './errors.js';
import { readBody, send } from './server.js';
import type { SimulatorControl } from './types.js';

type Json = Record<string, unknown>;

const ok = (res: ServerResponse, body: unknown = { ok: true }): void => send(res, 200, JSON.stringify(body));

/** Maps /_control/... onto the control handle. No auth, not logged as API requests. */
export function createControlHandler(control: SimulatorControl): (req: IncomingMessage, res: ServerResponse, path: string) => void {
  return (req, res, path) => {
    void (async () => {
      try {
        const text = req.method === 'GET' ? '' : await readBody(req);
        let body: Json = {};
        if (text.trim() !== '') {
          try {
            body = JSON.parse(text) as Json;
          } catch {
            throw new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
          }
        }
        dispatch(control, req.method ?? 'GET', path.slice('/_control'.length), body, res);
      } catch (err) {
        const e = err instanceof ApiError ? err : new ApiError(400, 'control_error', err instanceof Error ? err.message : String(err));
        send(res, e.status, e.body());
      }
    })();
  };
}

function dispatch(control: SimulatorControl, method: string, sub: string, body: Json, res: ServerResponse): void {
  const route = `${method} ${sub}`;
  const hide = /^POST \/tickets\/([^/]+)\/hide$/.exec(route);
  if (hide) {
    control.hideTicket(decodeURIComponent(hide[1] as string), body.reason as 'spam');
    return ok(res);
  }
  const removeMsg = /^DELETE \/tickets\/([^/]+)\/messages\/([^/]+)$/.exec(route);
  if (removeMsg) {
    control.removeMessage(decodeURIComponent(removeMsg[1] as string), decodeURIComponent(removeMsg[2] as string));
    return ok(res);
  }
  switch (route) {
    case 'GET /truth':
      return ok(res, control.truth());
    case 'POST /faults':
      control.setFaults(body);
      return ok(res);
    case 'DELETE /faults':
      control.clearFaults();
      return ok(res);
    case 'POST /fail-next':
      control.failNext(body as unknown as Parameters<SimulatorControl['failNext']>[0]);
      return ok(res);
    case 'GET /requests':
      return ok(res, { requests: control.requests() });
    case 'DELETE /requests':
      control.clearRequests();
      return ok(res);
    case 'GET /clock':
      return ok(res, { now: control.now().toISOString() });
    case 'POST /clock':
      control.advanceClock(Number(body.advanceMs ?? 0));
      return ok(res, { now: control.now().toISOString() });
    case 'POST /corrupt':
      control.corrupt(body.entityType as 'ticket', String(body.id), body.how as undefined);
      return ok(res);
    case 'POST /repair':
      control.repair(body.entityType as 'ticket', String(body.id));
      return ok(res);
    case 'POST /act':
      return ok(res, { activity: control.act(body.count === undefined ? 1 : Number(body.count)) });
    case 'POST /act-every-kind':
      return ok(res, { activity: control.actEveryKind() });
    case 'POST /burst':
      control.burst(Number(body.count ?? 1));
      return ok(res);
    case 'POST /events':
      return ok(res, { id: control.injectEvent(body as unknown as Parameters<SimulatorControl['injectEvent']>[0]) });
    case 'POST /expire-cursors':
      control.expireCursors();
      return ok(res);
    case 'GET /dialect':
      return ok(res, { dialect: control.dialect() });
    case 'POST /dialect':
      return ok(res, { dialect: control.setDialect(body) });
  }
  throw new ApiError(404, 'not_found', `No control route ${route}.`);
}
