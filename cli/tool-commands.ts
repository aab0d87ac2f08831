import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { CliApi } from './api.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { printObject } from './output.ts';

const enc = encodeURIComponent;

/** `cadenza tools`: one tool call of a mission: cancel it, or send the result of a tool you run (`runs: client`). */
export function addToolCommands(program: Command, api: () => CliApi): void {
  const tools = program.command('tools').description('tool calls of a mission');
  tools
    .command('cancel')
    .description('cancel one running tool call; the mission goes on')
    .argument('<mission>', 'mission id')
    .argument('<toolUseId>', 'the tool call (shown by run and missions show)')
    .addOption(new Option('--json', 'print JSON for scripts'))
    .action(async (mission: string, toolUseId: string, o) =>
      printObject(await api().json('POST', `/api/v1/missions/${enc(mission)}/tools/${enc(toolUseId)}/cancel`), o.json),
    );
  tools
    .command('result')
    .description('send the result of a tool you run (a call the mission waits for): its JSON output, from --file or stdin')
    .argument('<mission>', 'mission id')
    .argument('<toolUseId>', 'the waiting call (shown by run as "waits for your result")')
    .option('--file <path>', 'read the JSON output from this file (default: stdin)')
    .option('--error <message>', 'the tool failed: the model reads this message instead of an output')
    .addOption(new Option('--json', 'print JSON for scripts'))
    .action(async (mission: string, toolUseId: string, o) => {
      const body = o.error !== undefined ? { error: String(o.error) } : { output: await readOutput(o.file) };
      printObject(await api().json('POST', `/api/v1/missions/${enc(mission)}/tools/${enc(toolUseId)}/result`, { json: body }), o.json);
    });
}

/** The output as JSON, from a file or stdin; anything else is a usage error naming where it was read. */
async function readOutput(file: string | undefined): Promise<unknown> {
  const where = file ?? 'stdin';
  let text: string;
  try {
    text = file !== undefined ? await readFile(file, 'utf8') : await readStdin();
  } catch (err) {
    throw new CliError(`cannot read ${where}: ${(err as Error).message}`, EXIT.usage);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new CliError(`the output in ${where} is not JSON: ${(err as Error).message}`, EXIT.usage);
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new Error('stdin is a terminal: pipe the JSON output in, or use --file');
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}
