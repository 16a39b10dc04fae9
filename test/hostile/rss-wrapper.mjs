// Runs the CLI (argv[2]) and, as it exits, writes its peak resident set size in KiB to the file
// named by WSMIRROR_TEST_RSS_FILE: the kernel's own high-water mark, whatever the exit path.
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const out = process.env.WSMIRROR_TEST_RSS_FILE;
process.on('exit', () => {
  if (out) writeFileSync(out, String(process.resourceUsage().maxRSS));
});
const bin = process.argv[2];
process.argv.splice(1, 1);
await import(pathToFileURL(bin).href);
