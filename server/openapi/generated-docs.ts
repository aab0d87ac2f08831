import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationMarkdown } from '../../config/config-docs.ts';
import { ROUTE_DOCS } from '../route-docs.ts';
import { httpApiMarkdown } from './markdown.ts';
import { openApiDocument } from './openapi-document.ts';

/**
 * The reference pages generated from code, by path under the repository root: written by `npm run docs`
 * (bin/gen-docs.ts), compared with the committed files by test/unit/generated-docs.test.ts.
 */
export function generatedDocs(root: string): Record<string, string> {
  // The version is left out of the page so a version bump does not make it stale.
  const doc = openApiDocument(ROUTE_DOCS, '');
  return {
    'docs/http-api.md': httpApiMarkdown(doc),
    'docs/configuration.md': configurationMarkdown(readFileSync(join(root, '.env.example'), 'utf8')),
  };
}
