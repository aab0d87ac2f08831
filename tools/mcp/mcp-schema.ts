import { z } from 'zod';
import { providerPlaceholders, templateProblem } from '../env-template.ts';

/**
 * An MCP server an app declares instead of HTTP tools: a command run over stdio, or a Streamable HTTP URL. Values
 * may hold `${NAME}` (the worker's environment), filled when the worker connects. `include`/`exclude` filter the
 * server's tools by the names the server gives them.
 */
export type McpServerSpec = (
  | {
      transport: 'stdio';
      command: string;
      args: string[];
      env: Record<string, string>;
      /** The app's folder, where it runs. */ cwd?: string;
    }
  | { transport: 'http'; url: string; headers: Record<string, string> }
) & {
  include?: string[];
  exclude: string[];
  /** The server's tools (by the names it gives them) a person approves each call of first (`approval: required` of HTTP tools). */
  approval: string[];
  /** Per call, like an HTTP tool's `timeout_s`. */
  timeoutS: number;
  retries: number;
  /** Bound on starting the server and listing its tools. */
  listTimeoutS: number;
};

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// One connection is shared by every mission of a worker, so a value cannot depend on the user: no provider keys.
const templated = z.string().superRefine((value, ctx) => {
  const problem = templateProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
  else if (providerPlaceholders(value).length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: '${provider.<id>} is not available to MCP servers (one connection serves every user): use ${NAME}',
    });
  }
});

const names = z.array(z.string().min(1)).min(1, 'must name at least one tool');

/** The zod schema of an app's `mcp:` block. */
export const mcpServerSchema = z
  .strictObject({
    command: z
      .array(templated.pipe(z.string().min(1, 'must not be empty')))
      .min(1, 'must name the program to run')
      .optional(),
    env: z.record(z.string().regex(ENV_NAME, 'must be a valid environment variable name'), templated).optional(),
    url: templated.pipe(z.string().min(1)).optional(),
    headers: z.record(z.string().regex(HEADER_NAME, 'must be a valid header name'), templated).optional(),
    include: names.optional(),
    exclude: names.optional(),
    approval: names.optional(),
    timeout_s: z.int().min(1).max(600).default(30),
    retries: z.int().min(0).max(5).default(2),
    list_timeout_s: z.int().min(1).max(120).default(15),
  })
  .superRefine((m, ctx) => {
    if ((m.command === undefined) === (m.url === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'declare either command (stdio) or url (Streamable HTTP)' });
    }
    if (m.command !== undefined && m.headers !== undefined)
      ctx.addIssue({ code: 'custom', message: 'headers go with url', path: ['headers'] });
    if (m.url !== undefined && m.env !== undefined) ctx.addIssue({ code: 'custom', message: 'env goes with command', path: ['env'] });
    if (m.url !== undefined && !m.url.includes('${')) {
      const protocol = URL.canParse(m.url) ? new URL(m.url).protocol : '';
      if (protocol !== 'http:' && protocol !== 'https:') {
        ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL or contain ${NAME} placeholders', path: ['url'] });
      }
    }
  })
  .transform((m): McpServerSpec => {
    const common = {
      ...(m.include ? { include: m.include } : {}),
      exclude: m.exclude ?? [],
      approval: m.approval ?? [],
      timeoutS: m.timeout_s,
      retries: m.retries,
      listTimeoutS: m.list_timeout_s,
    };
    if (m.command) {
      const [command, ...args] = m.command;
      return { transport: 'stdio', command: command!, args, env: m.env ?? {}, ...common };
    }
    return { transport: 'http', url: m.url!, headers: m.headers ?? {}, ...common };
  });
