import { FACTORY_PROMPT_MARKER } from '../contracts/script-factory.ts';
import type { ChatMessage } from '../model/model-types.ts';

/** The longest script the factory keeps from a reply (it travels in the factory's workflow history). */
export const MAX_SCRIPT_CHARS = 64_000;
// The sample as the prompt shows it: enough to see its shape; the run itself gets all of it.
const MAX_SAMPLE_CHARS = 20_000;

/** What one attempt's prompt is written from: the request, the sample, and the previous attempt when there was one. */
export type FactoryPromptInput = {
  script: string;
  description: string;
  runtime: 'python' | 'node';
  sample: unknown;
  expected: string[];
  previous?: { source: string; error: string } | undefined;
};

/** The system text and the one user message of an attempt's model call. */
export function buildFactoryPrompt(p: FactoryPromptInput): { system: string; messages: ChatMessage[] } {
  const language = p.runtime === 'python' ? 'Python 3 (standard library only)' : 'Node.js (an ES module, built-in modules only)';
  const system = [
    FACTORY_PROMPT_MARKER,
    `You write one ${language} script for a skill. It reads its input as JSON on stdin and prints its result as one JSON`,
    'value on stdout. It runs in a sandbox: no network, no files outside its own folder and /tmp.',
    'Answer with the complete script in one fenced code block and nothing else.',
  ].join(' ');
  const sample = JSON.stringify(p.sample, null, 2) ?? 'null';
  const parts = [
    `Script: ${p.script}`,
    `What it does: ${p.description}`,
    `Sample input (JSON on stdin):\n${sample.length > MAX_SAMPLE_CHARS ? `${sample.slice(0, MAX_SAMPLE_CHARS)}\n… [cut]` : sample}`,
    `Its JSON output must satisfy every one of these checks (key path, operator, JSON literal; $ is the whole output):\n${p.expected.map((e) => `- ${e}`).join('\n')}`,
  ];
  if (p.previous) {
    // A reply that held no script has no source to show, only why it was refused.
    if (p.previous.source) parts.push(`Your previous script:\n\`\`\`\n${p.previous.source}\n\`\`\``);
    parts.push(`It failed on the sample with this error; fix it:\n${p.previous.error}`);
  }
  return { system, messages: [{ role: 'user', content: [{ type: 'text', text: parts.join('\n\n') }] }] };
}

/** The script in a reply: the first fenced code block, or else the whole text when it has no fence; why not, when none. */
export function scriptFromReply(text: string): { ok: true; source: string } | { ok: false; error: string } {
  const fenced = /```[^\n`]*\n([\s\S]*?)```/.exec(text);
  const source = (fenced ? fenced[1]! : text).trim();
  if (source === '') return { ok: false, error: 'the reply held no script: answer with the script in a fenced code block' };
  if (source.length > MAX_SCRIPT_CHARS) return { ok: false, error: `the script is longer than ${MAX_SCRIPT_CHARS} characters` };
  return { ok: true, source: `${source}\n` };
}
