import { type GlobalFlags, Lifecycle, loadResources, openWriterSession } from '../../session/index.js';
import type { SecretRedactor } from '../../util/redact.js';

/** Applies pending migrations alone; a writer, so it refuses while another writer holds the mirror. */
export async function migrateCommand(flags: GlobalFlags, redactor: SecretRedactor): Promise<void> {
  const res = loadResources(flags, redactor);
  const life = new Lifecycle();
  try {
    // No probe: migrating needs no upstream, so it works before an API key is set.
    const { applied } = await openWriterSession(res, life, { client: null, lock: { wait: false } });
    process.stdout.write(
      applied.length === 0 ? 'The mirror schema is up to date.\n' : `Applied ${applied.length} migration(s): ${applied.join(', ')}.\n`,
    );
  } finally {
    await life.close();
  }
}
