import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadAppRegistry } from '../../tools/app-registry.ts';
import { toToolReply } from '../../tools/mcp/mcp-result.ts';

const roots: string[] = [];
after(() => Promise.all(roots.map((root) => rm(root, { recursive: true, force: true }))));

async function load(id: string, mcp: string, extra = '') {
  const root = await mkdtemp(join(tmpdir(), 'cadenza-mcp-apps-'));
  roots.push(root);
  await mkdir(join(root, id));
  await writeFile(join(root, id, 'app.yml'), `id: ${id}\nname: ${id}\ndescription: Test.\n${extra}mcp:\n${mcp}`);
  return { registry: await loadAppRegistry(root), root };
}

const listed = (tools: Array<{ name: string; description?: string; inputSchema?: Record<string, unknown> }>) => ({
  appId: 'srv',
  listedAt: new Date(),
  ok: true as const,
  tools: tools.map((t) => ({ inputSchema: { type: 'object' }, ...t })),
});

describe('MCP apps in app.yml', () => {
  it('reads a stdio server (run in its app folder) and is pending until a listing gives it tools', async () => {
    const { registry, root } = await load('srv', '  command: [node, server.js, --flag]\n  env: {TOKEN: "${SRV_TOKEN}"}\n');
    const app = registry.mcpApps[0]!;
    assert.deepEqual(app.mcp, {
      transport: 'stdio',
      command: 'node',
      args: ['server.js', '--flag'],
      env: { TOKEN: '${SRV_TOKEN}' },
      cwd: join(root, 'srv'),
      exclude: [],
      approval: [],
      timeoutS: 30,
      retries: 2,
      listTimeoutS: 15,
    });
    assert.equal(registry.getApp('srv'), undefined);
    assert.match(registry.loadError('srv.x') ?? '', /not been listed yet/);
  });

  it('refuses a block with both transports, neither, provider keys, or a bad URL, naming the problem', async () => {
    const cases: Array<[string, RegExp]> = [
      ['  command: [node]\n  url: http://127.0.0.1:1/mcp\n', /either command \(stdio\) or url/],
      ['  include: [a]\n', /either command \(stdio\) or url/],
      ['  url: "http://h/mcp"\n  headers: {Authorization: "Bearer ${provider.brave}"}\n', /not available to MCP servers/],
      ['  url: ftp://h/mcp\n', /http\(s\) URL/],
      ['  url: http://h/mcp\n  env: {A: b}\n', /env goes with command/],
    ];
    for (const [block, reason] of cases) {
      const { registry } = await load('srv', block);
      assert.equal(registry.mcpApps.length, 0, block);
      assert.match(registry.errors[0]?.message ?? '', reason, block);
    }
    const both = await load(
      'srv',
      '  url: http://h/mcp\n',
      'tools:\n  - {name: a, description: b, input_schema: {type: object}, http: {url: "http://h"}}\n',
    );
    assert.match(both.registry.errors[0]?.message ?? '', /either tools: .* or mcp:/);
  });

  it('names tools by the one rule, applies include/exclude, and skips a tool with an unusable name or schema alone', async () => {
    const { registry } = await load('srv', '  url: http://127.0.0.1:1/mcp\n  exclude: [secret-tool]\n');
    registry.applyMcpListing(
      listed([
        { name: 'get-Sum', description: 'Adds.' },
        { name: 'secret-tool' },
        { name: 'get_sum' },
        { name: 'broken', inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } },
        { name: 'x'.repeat(60) },
        { name: 'modern', inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' } },
      ]),
    );
    const app = registry.getApp('srv')!;
    assert.deepEqual(
      app.tools.map((t) => [t.qualifiedName, t.mcp?.tool, t.description]),
      [
        ['srv.get_sum', 'get-Sum', 'Adds.'],
        ['srv.modern', 'modern', 'modern'],
      ],
    );
    assert.deepEqual(
      app.skipped.map((s) => s.name),
      ['get_sum', 'broken', 'x'.repeat(48)],
    );
    assert.match(registry.loadError('srv.broken') ?? '', /invalid input schema/);
  });

  it('keeps only the included tools and reports an included name the server lacks', async () => {
    const { registry } = await load('srv', '  url: http://127.0.0.1:1/mcp\n  include: [echo, gone]\n');
    registry.applyMcpListing(listed([{ name: 'echo' }, { name: 'other' }]));
    assert.deepEqual(
      registry.getApp('srv')!.tools.map((t) => t.name),
      ['echo'],
    );
    assert.match(registry.loadError('srv.gone') ?? '', /in include but not on the server/);
  });

  it('moves an app whose listing failed to the errors, and ignores a listing older than the one it has', async () => {
    const { registry } = await load('srv', '  url: http://127.0.0.1:1/mcp\n');
    const at = new Date();
    registry.applyMcpListing({ ...listed([{ name: 'echo' }]), listedAt: at });
    registry.applyMcpListing({ appId: 'srv', listedAt: new Date(at.getTime() - 1000), ok: false, error: 'old failure' });
    assert.ok(registry.getTool('srv.echo'));
    registry.applyMcpListing({ appId: 'srv', listedAt: new Date(at.getTime() + 1000), ok: false, error: 'ECONNREFUSED' });
    assert.equal(registry.getTool('srv.echo'), undefined);
    assert.match(registry.loadError('srv.echo') ?? '', /could not be listed: ECONNREFUSED/);
  });
});

describe('MCP results as the model sees them', () => {
  it('isError is an error, structured content wins over its text twin, media and resources are one-line summaries', () => {
    assert.deepEqual(toToolReply({ isError: true, content: [{ type: 'text', text: 'no such city' }] }), {
      ok: false,
      error: 'no such city',
    });
    assert.deepEqual(toToolReply({ content: [{ type: 'text', text: '{"t":1}' }], structuredContent: { t: 1 } }), {
      ok: true,
      result: { t: 1 },
    });
    const mixed = toToolReply({
      content: [
        { type: 'text', text: 'Here:' },
        { type: 'image', data: 'A'.repeat(4000), mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'y'.repeat(2000) } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'QUJD' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c' },
      ],
    });
    assert.ok(mixed.ok);
    const text = mixed.result as string;
    assert.match(
      text,
      /^Here:\n\[image image\/png, 2\.9 KB\]\n\[resource file:\/\/\/a\.txt text\/plain, 2000 characters\]\ny{500}…\n\[resource file:\/\/\/b\.bin, 3 bytes\]\n\[resource link file:\/\/\/c \(c\)\]$/,
    );
  });
});
