import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolReply } from '../http-executor.ts';

type Block = CallToolResult['content'][number];

const RESOURCE_EXCERPT_CHARS = 500;

/**
 * The tool result the model sees for an MCP `tools/call` result: `isError` becomes an error reply; structured
 * content is the result when the server gives it (its text twin is not repeated); otherwise the text blocks, with
 * images, audio and resources summarised in one line each, never dumped.
 */
export function toToolReply(result: CallToolResult): ToolReply {
  const text = result.content.map(describeBlock).join('\n');
  if (result.isError) return { ok: false, error: text || 'the tool reported an error' };
  if (result.structuredContent !== undefined) return { ok: true, result: result.structuredContent };
  return { ok: true, result: text };
}

function describeBlock(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${sizeOf(block.data)}]`;
    case 'resource_link':
      return `[resource link ${block.uri}${block.name ? ` (${block.name})` : ''}${block.mimeType ? ` ${block.mimeType}` : ''}]`;
    case 'resource': {
      const r = block.resource;
      const mime = r.mimeType ? ` ${r.mimeType}` : '';
      if ('text' in r && typeof r.text === 'string') {
        const excerpt = r.text.length > RESOURCE_EXCERPT_CHARS ? `${r.text.slice(0, RESOURCE_EXCERPT_CHARS)}…` : r.text;
        return `[resource ${r.uri}${mime}, ${r.text.length} characters]\n${excerpt}`;
      }
      return `[resource ${r.uri}${mime}, ${'blob' in r && typeof r.blob === 'string' ? sizeOf(r.blob) : 'binary'}]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

// Base64 holds 3 bytes per 4 characters.
function sizeOf(base64: string): string {
  const bytes = Math.floor((base64.length * 3) / 4);
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KB`;
}
