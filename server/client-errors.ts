import { maxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { ERROR_CODES, type ErrorCode } from './errors.ts';

/** What Node's parser reports, as the error the API answers everything else with. */
const ANSWERS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: [
    'headers_too_large',
    `the request line and headers are over the server's limit (${maxHeaderSize / 1024} KB): send a shorter URL or fewer headers`,
  ],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['headers_too_large', "the body's chunk extensions are over the server's limit"],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'the request was not received in time'],
};
const MALFORMED: [ErrorCode, string] = ['validation_failed', 'the request is not valid HTTP'];

/**
 * Node's HTTP server answers a request it cannot parse (a request line and headers over its limit, malformed HTTP, a
 * request too slow to arrive) by itself, with a bare status line before Express sees anything. With a `clientError`
 * listener the answer is ours: the same `{error:{code,message}}` JSON as every other refusal, then the connection ends.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // Nothing can be answered on a connection that is gone or halfway through a response; one kept alive after a whole
    // response can (Node's own rule: no in-flight response whose head is sent).
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const [code, message] = ANSWERS[err.code ?? ''] ?? MALFORMED;
      const body = JSON.stringify({ error: { code, message } });
      socket.end(
        `HTTP/1.1 ${ERROR_CODES[code]} ${STATUS_TEXT[ERROR_CODES[code]] ?? 'Bad Request'}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroySoon();
  });
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };
