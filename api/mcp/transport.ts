import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * The MCP server's side of one POST of stateless Streamable HTTP answered with JSON: the request's message goes
 * in, its response comes out, and nothing else is sent (with no stream open, notifications of a request have
 * nowhere to go, as with the SDK's transport in JSON response mode). The route does the HTTP part (headers,
 * statuses, the body as JSON) on Fastify's request and reply; the SDK's Node transport would convert both to
 * web-standard objects and back, which cost more than building the server.
 */
export class ExchangeTransport implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private pending: { id: RequestId; answer: (message: JSONRPCMessage | undefined) => void } | undefined;
  private closed = false;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    const pending = this.pending;
    if (!pending || !(isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) || message.id !== pending.id) return;
    this.pending = undefined;
    pending.answer(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pending?.answer(undefined);
    this.pending = undefined;
    this.onclose?.();
  }

  /**
   * Hands the message to the server: a request resolves with its response (undefined when the transport closed
   * first: the api is stopping); a notification or a response resolves at once, with nothing to answer.
   */
  exchange(message: JSONRPCMessage, extra: MessageExtraInfo): Promise<JSONRPCMessage | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    if (!isJSONRPCRequest(message)) {
      this.onmessage?.(message, extra);
      return Promise.resolve(undefined);
    }
    return new Promise((answer) => {
      this.pending = { id: message.id, answer };
      this.onmessage?.(message, extra);
    });
  }
}
