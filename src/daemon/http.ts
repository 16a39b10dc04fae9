import { createServer, type Server } from 'node:http';
import type { Logger } from '../log/index.js';
import { WsmirrorError } from '../util/errors.js';
import type { DaemonMetrics } from './metrics.js';

export interface HealthState {
  role: 'standby' | 'writer' | 'stopping';
  lastSuccessAt: string | null;
  consecutiveFailures: number;
  lagSeconds: number | null;
  lastError: string | null;
}

/** Failing this many cycles in a row turns /healthz red so an orchestrator can restart or alert. */
export const UNHEALTHY_AFTER_FAILURES = 3;

/** GET /healthz (JSON; 503 when unhealthy), GET /metrics (Prometheus text). */
export async function startHealthServer(options: {
  host: string;
  port: number;
  metrics: DaemonMetrics;
  health: () => HealthState;
  logger: Logger;
}): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      const state = options.health();
      const ok = state.consecutiveFailures < UNHEALTHY_AFTER_FAILURES;
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ok ? 'ok' : 'failing', ...state }));
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      options.metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': options.metrics.registry.contentType });
          res.end(text);
        },
        (err: Error) => {
          res.writeHead(500).end(err.message);
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found; try /healthz or /metrics' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, options.host, options.port)));
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${options.host}:${port}`;
  options.logger.info({ url }, 'health and metrics server listening');
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

/** A port in use or not allowed is a configuration problem (exit 2) naming the key to change. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
    const what = err.code === 'EADDRINUSE' ? 'is already in use' : 'may not be opened by this user';
    return new WsmirrorError('PORT_IN_USE', `http.port ${port} on ${host} ${what}; choose another http.port (or WSMIRROR_HTTP_PORT), or 0 to disable the health server.`, { cause: err });
  }
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') {
    return new WsmirrorError('PORT_IN_USE', `http.host ${host} is not an address of this machine; fix http.host (or WSMIRROR_HTTP_HOST).`, { cause: err });
  }
  return err;
}
