import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../log/index.js';
import { WsmirrorError } from '../util/errors.js';
import { bearerGate } from './auth.js';
import type { HealthTracker } from './health.js';
import type { DaemonMetrics } from './metrics.js';
import { renderPage } from './page/render.js';
import { PAGE_CSP } from './page/style.js';
import type { StatusSource } from './status-source.js';
import { answerWait, type AsOfWaiters } from './wait.js';
import type { RecordWaiters } from './record-wait.js';

type Handler = (res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

export interface HealthServerOptions {
  host: string;
  port: number;
  metrics: DaemonMetrics;
  health: HealthTracker;
  logger: Logger;
  /** The status page and /status.json; without it those two paths answer 404. */
  status?: StatusSource;
  /** Config `http.authToken`: when set, every path but /healthz needs `Authorization: Bearer <it>`. Default: none. */
  authToken?: string;
  /** GET /wait (read-after-write, src/daemon/wait.ts); without it that path answers 404. */
  wait?: AsOfWaiters;
  /** GET /wait for one record (src/daemon/record-wait.ts); without it only `until` is answered. */
  recordWait?: RecordWaiters;
}

/** Headers every answer carries: nothing here is for caching or framing elsewhere. */
const COMMON_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };

/**
 * The daemon's http server, read-only: GET /healthz (liveness), GET /readyz (readiness), both JSON
 * with 503 and a `reason` when not ok; GET /metrics (Prometheus text); GET / (the status page) and
 * GET /status.json; GET /wait (read-after-write). HEAD works wherever GET does; any other method is 405. The token check sits in
 * front of the routes, so a path added later is covered too. docs/operations.md says what each
 * answer means.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const routes = routesOf(options);
  const allowed = bearerGate(options.authToken);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return json(res, 405, { error: 'read-only: only GET and HEAD are allowed' }, { allow: 'GET, HEAD' });
    if (!allowed(path, req.headers.authorization)) {
      return json(
        res,
        401,
        { error: 'this endpoint needs `Authorization: Bearer <http.authToken>`' },
        { 'www-authenticate': 'Bearer realm="wsmirror"' },
      );
    }
    const route = routes.get(path);
    if (!route) return json(res, 404, { error: `not found; try ${[...routes.keys()].join(', ')}` });
    Promise.resolve(route(res, req)).catch((err: Error) => failed(req, res, err, options.logger));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, options.host, options.port)));
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${options.host}:${port}`;
  options.logger.info(
    { url, authToken: options.authToken === undefined ? 'none' : 'required' },
    'http server listening (status page, health, metrics)',
  );
  return {
    server,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function routesOf(o: HealthServerOptions): Map<string, Handler> {
  const routes = new Map<string, Handler>();
  if (o.status) {
    const status = o.status;
    routes.set('/', async (res) => {
      const body = renderPage(await status.page());
      res.writeHead(200, {
        ...COMMON_HEADERS,
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': PAGE_CSP,
        'x-frame-options': 'DENY',
      });
      res.end(body);
    });
    routes.set('/status.json', async (res) => json(res, 200, await status.report()));
  }
  for (const path of ['/healthz', '/readyz']) {
    routes.set(path, (res) => {
      const verdict = path === '/healthz' ? o.health.liveness() : o.health.readiness();
      json(res, verdict.ok ? 200 : 503, verdict.body);
    });
  }
  const waiters = o.wait;
  if (waiters)
    routes.set('/wait', (res, req) =>
      answerWait(
        req,
        res,
        { asOf: waiters, records: o.recordWait },
        () => o.health.state.role,
        (status, body, headers) => json(res, status, body, headers),
      ),
    );
  routes.set('/metrics', async (res) => {
    const text = await o.metrics.registry.metrics();
    res.writeHead(200, { ...COMMON_HEADERS, 'content-type': o.metrics.registry.contentType });
    res.end(text);
  });
  return routes;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function failed(req: IncomingMessage, res: ServerResponse, err: Error, logger: Logger): void {
  logger.warn({ err, path: (req.url ?? '/').split('?')[0] }, 'http request failed');
  if (res.headersSent) res.destroy();
  else json(res, 503, { error: err.message });
}

/** A port in use or not allowed is a configuration problem (exit 2) naming the key to change. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
    const what =
      err.code === 'EADDRINUSE'
        ? 'is already in use (another wsmirror daemon on this host, for another schema or database, needs a port of its own)'
        : 'may not be opened by this user';
    return new WsmirrorError(
      'PORT_IN_USE',
      `http.port ${port} on ${host} ${what}; set \`http.port\` in this daemon's config file (or WSMIRROR_HTTP_PORT) to a free port, e.g. ${port + 1}, or 0 to disable the http server.`,
      { cause: err },
    );
  }
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') {
    return new WsmirrorError('PORT_IN_USE', `http.host ${host} is not an address of this machine; fix http.host (or WSMIRROR_HTTP_HOST).`, {
      cause: err,
    });
  }
  return err;
}
