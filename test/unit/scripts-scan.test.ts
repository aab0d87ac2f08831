import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scanBundle } from '../../skill-scripts/static-scan.ts';

const file = (path: string, text: string) => ({ path, data: Buffer.from(text) });

describe('static scan of a bundle’s scripts', () => {
  it('notes network and process modules, obfuscation and hard-coded secrets, with file and line', () => {
    const findings = scanBundle([
      file('scripts/fetch.py', 'import json\nimport socket\nimport subprocess\n'),
      file('scripts/run.mjs', "import { exec } from 'node:child_process';\nconst r = await fetch('https://x');\n"),
      file('scripts/packed.py', `import base64\nexec(base64.b64decode("cHJpbnQoMSk="))\nx = "${'\\x41'.repeat(20)}"\n`),
      file('scripts/keys.py', 'AWS = "AKIAABCDEFGHIJKLMNOP"\napi_key = "0123456789abcdef0123"\n'),
      file('README.md', 'import socket is fine to mention in prose\n'),
    ]);
    const has = (path: string, kind: string, line: number) =>
      assert.ok(
        findings.some((f) => f.file === path && f.kind === kind && f.line === line),
        `${path}:${line} ${kind} in ${JSON.stringify(findings)}`,
      );
    has('scripts/fetch.py', 'network', 2);
    has('scripts/fetch.py', 'process', 3);
    has('scripts/run.mjs', 'process', 1);
    has('scripts/run.mjs', 'network', 2);
    has('scripts/packed.py', 'obfuscation', 2);
    has('scripts/packed.py', 'obfuscation', 3);
    has('scripts/keys.py', 'secret', 1);
    has('scripts/keys.py', 'secret', 2);
    assert.ok(!findings.some((f) => f.file === 'README.md'), 'prose is not scanned');
  });

  it('finds nothing in a plain script', () => {
    assert.deepEqual(scanBundle([file('scripts/sum.py', 'import json, sys\nprint(json.dumps(sum(json.load(sys.stdin))))\n')]), []);
  });
});
