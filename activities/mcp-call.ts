import type { McpToolDefinition } from '../tools/app-definition.ts';
import type { ToolReply } from '../tools/http-executor.ts';
import type { McpApp } from '../tools/mcp/mcp-pool.ts';
import type { ToolCallInput } from '../contracts/mission.ts';
import type { ActivityDeps } from './deps.ts';

/**
 * One try of an MCP tool through the process's pool: the activity's abort signal cancels the request on the server
 * (`notifications/cancelled`), and the server's progress reports become `tool_progress` live events.
 */
export async function callMcpTool(
  deps: Pick<ActivityDeps, 'mcp' | 'registry' | 'live'>,
  tool: McpToolDefinition,
  input: ToolCallInput,
  opts: { signal: AbortSignal; idempotencyKey: string },
): Promise<ToolReply> {
  const app = deps.registry.getApp(tool.appId);
  if (!app?.mcp) return { ok: false, error: `tool became unavailable: app ${tool.appId} has no MCP server on this worker` };
  const toolUseId = input.toolUse.id;
  return deps.mcp.call(app as McpApp, tool, input.toolUse.input, {
    ...opts,
    onProgress: (p) => deps.live?.publish(input.missionId, { type: 'tool_progress', toolUseId, ...p }),
  });
}
