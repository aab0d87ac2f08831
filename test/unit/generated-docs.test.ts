import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedDocs } from '../../server/openapi/generated-docs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

test('the generated reference pages match the code they are generated from', () => {
  for (const [path, text] of Object.entries(generatedDocs(ROOT))) {
    const committed = existsSync(join(ROOT, path)) ? read(path) : '';
    assert.ok(committed === text, `${path} is stale: run npm run docs`);
  }
});

test('the README is a front door: at most 250 lines', () => {
  const lines = read('README.md').split('\n').length;
  assert.ok(lines <= 250, `README.md has ${lines} lines; move reference into docs/`);
});

test('every relative link in the README and docs/*.md resolves to a file', () => {
  const pages = [
    'README.md',
    'bench/README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const broken: string[] = [];
  for (const page of pages) {
    // Links outside code spans: [text](target), the target without its #fragment.
    const text = read(page)
      .replace(/```[\s\S]*?```/g, '')
      .replace(/`[^`\n]*`/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:|^#/.test(target!)) continue;
      const file = target!.split('#')[0]!;
      if (!existsSync(join(ROOT, dirname(page), decodeURIComponent(file)))) broken.push(`${page} → ${target}`);
    }
  }
  assert.deepEqual(broken, [], 'links to files that do not exist');
});
