import { writeFile } from 'node:fs/promises';
import { buildWorkflowBundle } from './workflow-bundle.ts';

// Run by buildWorkflowBundleApart as a child process: `node bundle-process.ts <out-file> tracing|plain` writes the
// workflow bundle's code to <out-file> and exits, taking webpack's memory with it.
const [out, mode] = process.argv.slice(2);
if (!out || (mode !== 'tracing' && mode !== 'plain')) {
  process.stderr.write('usage: bundle-process.ts <out-file> tracing|plain\n');
  process.exit(2);
}
await writeFile(out, (await buildWorkflowBundle({ tracing: mode === 'tracing' })).code);
