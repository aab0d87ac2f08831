import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedDocs } from '../server/openapi/generated-docs.ts';

// `npm run docs`: rewrites the generated reference pages (docs/http-api.md, docs/configuration.md).
const root = fileURLToPath(new URL('..', import.meta.url));
for (const [path, text] of Object.entries(generatedDocs(root))) {
  writeFileSync(join(root, path), text);
  console.log(`wrote ${path}`);
}
