import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { buildBundle } from '../skills/bundle.ts';
import type { CliApi, Json } from './api.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { printMissionResult, printObject, printRows } from './output.ts';
import { chat } from './chat-command.ts';
import { runMission } from './run-command.ts';
import { addEvalCommand } from './eval-command.ts';
import { addToolCommands } from './tool-commands.ts';

const CAPABILITIES = ['mission.run', 'mission.read', 'skill.read', 'skill.write', 'skill.review'];
/** Folders a skill import leaves out. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

const positiveInt = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a positive whole number expected');
  return n;
};
const json = () => new Option('--json', 'print JSON for scripts');
const enc = encodeURIComponent;

/** Every subcommand of `cadenza`; each action returns its exit status through `setExit`. */
export function addCommands(program: Command, api: () => CliApi, setExit: (code: number) => void): void {
  program
    .command('run')
    .description('start a mission and follow it live (Ctrl-C: cancel or detach)')
    .argument('<skill>', 'skill name')
    .argument('<objective>', 'what the mission should achieve')
    .option('-w, --workspace <code>', 'workspace code', process.env.CADENZA_WORKSPACE ?? 'default')
    .option('--max-turns <n>', 'turn limit', positiveInt)
    .option('--idempotency-key <key>', 'the same key starts the same mission once')
    .option('--detach', 'start it and print its id without following it')
    .addOption(json())
    .action(async (skill: string, objective: string, o) => setExit(await runMission(api(), skill, objective, o)));

  program
    .command('chat')
    .description('start a session and talk to it (Enter: a message; Ctrl-C: interrupt; Ctrl-D: end the session)')
    .argument('<skill>', 'skill name')
    .argument('[objective]', 'what the session starts with (default: the first line typed)')
    .option('-w, --workspace <code>', 'workspace code', process.env.CADENZA_WORKSPACE ?? 'default')
    .option('--max-turns <n>', 'turn limit of each exchange', positiveInt)
    .action(async (skill: string, objective: string | undefined, o) => setExit(await chat(api(), skill, objective, o)));

  const missions = program.command('missions').description("list, show, message, close and cancel missions; download a mission's files");
  missions
    .command('list')
    .description('your missions, newest first')
    .option('--status <status>', 'starting, running, idle, completed, failed or cancelled')
    .option('--skill <name>', 'only this skill')
    .option('--limit <n>', 'how many', positiveInt, 20)
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .addOption(json())
    .action(async (o) => {
      const query = new URLSearchParams({ limit: String(o.limit) });
      for (const k of ['status', 'skill', 'cursor'] as const) if (o[k]) query.set(k, o[k]);
      const page = await api().json('GET', `/api/v1/missions?${query}`);
      const rows = page.items.map((m: Json) => ({ ...m, skill: `${m.skill.name} v${m.skill.version}` }));
      printRows(rows, ['id', 'status', 'skill', 'createdAt', 'objective'], o.json, page);
      if (!o.json && page.nextCursor) process.stdout.write(`more: --cursor ${page.nextCursor}\n`);
    });
  missions
    .command('show')
    .description('a mission: status, tools, result')
    .argument('<id>', 'mission id')
    .addOption(json())
    .action(async (id: string, o) => {
      const m = await api().json('GET', `/api/v1/missions/${enc(id)}`);
      if (o.json) return printObject(m, true);
      printObject(
        { id: m.id, status: m.status, skill: `${m.skill.name} v${m.skill.version}`, objective: m.objective, turn: m.turn },
        false,
      );
      printRows(m.tools, ['toolUseId', 'name', 'status', 'durationMs'], false);
      if (m.status !== 'running' && m.status !== 'starting') printMissionResult(m);
    });
  missions
    .command('send')
    .description('send a running mission or an idle session a message')
    .argument('<id>', 'mission id')
    .argument('<text>', 'the message')
    .option('--interrupt', 'cancel the model call in flight and ask again with the message (default: queue it for the next turn)')
    .option('--cancel-tools', 'with --interrupt: cancel the running tool calls too')
    .option('--idempotency-key <key>', 'the same key sends the same message once')
    .addOption(json())
    .action(async (id: string, text: string, o) => {
      const body = {
        text,
        mode: o.interrupt ? 'interrupt' : 'queue',
        ...(o.cancelTools ? { cancelTools: true } : {}),
        ...(o.idempotencyKey ? { idempotencyKey: o.idempotencyKey } : {}),
      };
      printObject(await api().json('POST', `/api/v1/missions/${enc(id)}/messages`, { json: body }), o.json);
    });
  missions
    .command('close')
    .description('end a session: it completes once idle')
    .argument('<id>', 'mission id')
    .addOption(json())
    .action(async (id: string, o) => printObject(await api().json('POST', `/api/v1/missions/${enc(id)}/close`), o.json));
  missions
    .command('cancel')
    .description('cancel a running mission')
    .argument('<id>', 'mission id')
    .addOption(json())
    .action(async (id: string, o) => printObject(await api().json('POST', `/api/v1/missions/${enc(id)}/cancel`), o.json));

  missions
    .command('files')
    .description("the files a mission's tools and scripts returned; with a file id, that file's bytes")
    .argument('<id>', 'mission id')
    .argument('[fileId]', 'the file to download')
    .option('-o, --output <file>', 'with a file id: write it to this file instead of stdout')
    .addOption(json())
    .action(async (id: string, fileId: string | undefined, o) => {
      if (!fileId) {
        const page = await api().json('GET', `/api/v1/missions/${enc(id)}/files`);
        return printRows(page.items, ['id', 'name', 'mediaType', 'size', 'tool'], o.json, page);
      }
      const res = await api().send('GET', `/api/v1/missions/${enc(id)}/files/${enc(fileId)}`);
      const bytes = Buffer.from(await res.arrayBuffer());
      if (o.output) writeFileSync(fromCallerDir(o.output), bytes);
      else process.stdout.write(bytes);
    });

  addToolCommands(program, api);

  const skills = program.command('skills').description('list, show, import, export, evaluate and activate skills');
  skills
    .command('list')
    .description('your skills')
    .option('--status <status>', 'draft, active or quarantined')
    .addOption(json())
    .action(async (o) => {
      const page = await api().json('GET', `/api/v1/skills${o.status ? `?status=${enc(o.status)}` : ''}`);
      printRows(page.items, ['id', 'name', 'version', 'status', 'source', 'description'], o.json, page);
    });
  skills
    .command('show')
    .description('a skill and one of its versions')
    .argument('<id>', 'skill id')
    .option('--version <n>', 'a version other than the active one', positiveInt)
    .addOption(json())
    .action(async (id: string, o) => {
      const s = await api().json('GET', `/api/v1/skills/${enc(id)}${o.version ? `?version=${o.version}` : ''}`);
      if (o.json) return printObject(s, true);
      printObject(
        { id: s.id, name: s.name, status: s.status, version: s.version, versions: s.versions.join(', '), description: s.description },
        false,
      );
      process.stdout.write(`\n${s.body}\n`);
    });
  skills
    .command('import')
    .description('import a skill (it starts quarantined): a folder, a .zip or a SKILL.md file')
    .argument('<path>', 'folder, zip or SKILL.md')
    .addOption(json())
    .action(async (path: string, o) => {
      const upload = readUpload(path);
      const s = await api().json('POST', '/api/v1/skills/import', upload);
      printObject({ id: s.id, name: s.name, version: s.version, status: s.status }, o.json);
      if (!o.json) for (const w of s.warnings ?? []) process.stdout.write(`warning: ${w.field}: ${w.message}\n`);
      if (!o.json && s.status === 'quarantined') process.stdout.write(`review it, then: cadenza skills activate ${s.id}\n`);
    });
  skills
    .command('export')
    .description('the stored SKILL.md, verbatim')
    .argument('<id>', 'skill id')
    .option('--version <n>', 'a version other than the active one', positiveInt)
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .action(async (id: string, o) => {
      const res = await api().send('GET', `/api/v1/skills/${enc(id)}/export${o.version ? `?version=${o.version}` : ''}`);
      const text = await res.text();
      if (o.output) writeFileSync(fromCallerDir(o.output), text);
      else process.stdout.write(text);
    });
  skills
    .command('activate')
    .description('activate a draft or quarantined skill (needs skill.review)')
    .argument('<id>', 'skill id')
    .addOption(json())
    .action(async (id: string, o) => printObject(await api().json('POST', `/api/v1/skills/${enc(id)}/activate`), o.json));
  addEvalCommand(skills, api, setExit);

  program
    .command('keys')
    .description('API keys (admin: CADENZA_ADMIN_KEY)')
    .command('create')
    .description('issue an API key; it is shown once')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--user <id>', 'user id')
    .option('--capabilities <list>', `comma-separated, from ${CAPABILITIES.join(', ')}`, CAPABILITIES.join(','))
    .addOption(json())
    .action(async (o) => {
      const capabilities = String(o.capabilities)
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean);
      const unknown = capabilities.filter((c) => !CAPABILITIES.includes(c));
      if (unknown.length) throw new CliError(`unknown capabilities: ${unknown.join(', ')} (known: ${CAPABILITIES.join(', ')})`, EXIT.usage);
      const k = await api().json('POST', '/api/v1/admin/keys', { admin: true, json: { tenantId: o.tenant, userId: o.user, capabilities } });
      if (o.json) return printObject(k, true);
      process.stdout.write(`${k.key}\n`);
      process.stderr.write(`key ${k.id} for ${k.tenantId}/${k.userId}: ${k.capabilities.join(', ')} (shown once; keep it)\n`);
    });
}

/** A skill to upload: a folder zipped (deterministically, as the server stores bundles), a zip, or a SKILL.md. */
function readUpload(given: string): { raw: Buffer | string; contentType: string } {
  const path = fromCallerDir(given);
  let stats;
  try {
    stats = statSync(path);
  } catch {
    throw new CliError(`no such file or folder: ${given}`, EXIT.usage);
  }
  if (stats.isDirectory()) {
    const root = resolve(path);
    const files = listFiles(root).map((file) => ({ path: relative(root, file).split('\\').join('/'), data: readFileSync(file) }));
    if (!files.some((f) => f.path === 'SKILL.md')) throw new CliError(`${given} has no SKILL.md`, EXIT.usage);
    return { raw: buildBundle(basename(root), files).bytes, contentType: 'application/zip' };
  }
  const data = readFileSync(path);
  if (path.endsWith('.zip') || data.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1')))
    return { raw: data, contentType: 'application/zip' };
  return { raw: data.toString('utf8'), contentType: 'text/markdown' };
}

/** A path as the caller typed it: `npm run cadenza` runs in the package root, and says where the caller was in INIT_CWD. */
const fromCallerDir = (path: string) => resolve(process.env.INIT_CWD ?? '.', path);

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : listFiles(full);
    return entry.isFile() ? [full] : [];
  });
}
