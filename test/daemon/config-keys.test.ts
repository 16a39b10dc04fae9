import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/index.js';
import { sessionConfig } from '../../src/store/postgres.js';

describe('operations config keys', () => {
  it('rejects bad values naming what is allowed', () => {
    const issues = (input: object) => {
      const r = configSchema.safeParse(input);
      return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(issues({ schema: 'Acme; drop' })).toEqual([expect.stringMatching(/^schema: must be a lower-case PostgreSQL identifier/)]);
    expect(issues({ eventsRetentionDays: 1 })).toEqual([
      expect.stringMatching(/^eventsRetentionDays: must be 0 \(keep every event\) or at least 2 days/),
    ]);
    expect(issues({ fileMode: '666x' })).toEqual([expect.stringMatching(/^fileMode: must be an octal file mode/)]);
    expect(issues({ directoryMode: 'rwx' })).toEqual([expect.stringMatching(/^directoryMode: must be an octal directory mode/)]);
    expect(issues({ stallTimeoutMs: 0 })).toHaveLength(1);
    expect(issues({ schema: 'acme_2', eventsRetentionDays: 0, fileMode: '0640', directoryMode: '750' })).toEqual([]);
  });

  it("puts the session settings after the URL's own options, so ours win", () => {
    const url =
      'postgres://u:p@db:5432/mirrors?options=-c%20search_path%3Dpublic%20-c%20default_transaction_read_only%3Doff&sslmode=disable';
    const reader = sessionConfig(url, 'acme', true);
    expect(reader.options).toBe(
      '-c search_path=public -c default_transaction_read_only=off -c search_path=acme -c TimeZone=UTC -c default_transaction_read_only=on',
    );
    expect(reader.connectionString).not.toContain('options');
    expect(reader.connectionString).toContain('sslmode=disable');
    expect(sessionConfig('postgres://db/m', 'public', false)).toEqual({
      connectionString: 'postgres://db/m',
      options: '-c search_path=public -c TimeZone=UTC',
    });
  });
});
