import { describe, expect, it } from 'vitest';
import { spawnCli, waitForOutput } from '../helpers/cli.js';

/** The acceptance, as a user types it: serve, list with the key, 401 without, reply shows in the log. */
describe('wsmirror simulate', () => {
  it('serves the API with bearer auth, JSON errors, and writes that feed the change log', async () => {
    const sim = spawnCli(['simulate', '--port', '0', '--api-key', 'k', '--tickets', '50', '--deals', '20'], {});
    try {
      let out = '';
      sim.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await waitForOutput(sim, /listening on/);
      const base = /listening on (http:\/\/\S+?) /.exec(out)![1]!;
      const auth = { authorization: 'Bearer k' };
      const list = (await (await fetch(`${base}/api/v1/tickets?limit=2`, { headers: auth })).json()) as {
        tickets: Array<{ id: string }>;
        nextCursor: string | null;
      };
      expect(list.tickets).toHaveLength(2);
      expect(typeof list.nextCursor).toBe('string');
      const denied = await fetch(`${base}/api/v1/tickets?limit=2`);
      expect(denied.status).toBe(401);
      expect(((await denied.json()) as { error: { code: string } }).error.code).toBeTruthy();
      const reply = await fetch(`${base}/api/v1/tickets/${list.tickets[0]!.id}/messages`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ body: 'On it.' }),
      });
      expect(reply.status).toBe(201);
      const { message } = (await reply.json()) as { message: { id: string } };
      const events = (await (await fetch(`${base}/api/v1/events?limit=5`, { headers: auth })).json()) as {
        events: Array<{ entityId: string; payload: Record<string, unknown> }>;
      };
      expect(events.events[0]!.entityId).toBe(list.tickets[0]!.id);
      expect(events.events.some((e) => e.payload.messageId === message.id)).toBe(true);
    } finally {
      sim.kill('SIGTERM');
      expect((await sim.result).code).toBe(0);
    }
  });
});
