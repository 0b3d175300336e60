/**
 * A 2026-07-28 client for the tasks extension, on the official v2 SDK's StreamableHTTPClientTransport: the SDK's
 * Client refuses a `resultType: "task"` answer (it has no task runtime), so the messages are made here, envelope
 * and all, and the transport sends them as it sends any (its standard headers, `Mcp-Name` for `tasks/*` included).
 */
import { StreamableHTTPClientTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';

export const TASKS = 'io.modelcontextprotocol/tasks';

export interface RpcAnswer {
  result?: any;
  error?: { code: number; message: string; data?: any };
}

export class TasksClient {
  private readonly transport: StreamableHTTPClientTransport;
  private readonly waiting = new Map<number, (answer: RpcAnswer) => void>();
  private nextId = 1;

  private constructor(url: string, private readonly declareTasks: boolean, headers: Record<string, string>, private readonly capabilities: Record<string, unknown> = {}) {
    this.transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    this.transport.onmessage = (message: JSONRPCMessage) => {
      const m = message as { id?: number; result?: unknown; error?: RpcAnswer['error'] };
      if (m.id === undefined) return;
      this.waiting.get(m.id)?.({ ...(m.result !== undefined ? { result: m.result } : {}), ...(m.error !== undefined ? { error: m.error } : {}) });
      this.waiting.delete(m.id);
    };
  }

  /**
   * `declareTasks`: whether each request's capabilities name the extension. `headers`: e.g. the session's bearer.
   * `capabilities`: others each request declares (e.g. `elicitation`).
   */
  static async open(url: string, options: { declareTasks?: boolean; headers?: Record<string, string>; capabilities?: Record<string, unknown> } = {}): Promise<TasksClient> {
    const client = new TasksClient(url, options.declareTasks ?? true, options.headers ?? {}, options.capabilities);
    await client.transport.start();
    client.transport.setProtocolVersion('2026-07-28');
    return client;
  }

  request(method: string, params: Record<string, unknown> = {}, declareTasks = this.declareTasks): Promise<RpcAnswer> {
    const id = this.nextId++;
    const answered = new Promise<RpcAnswer>((resolve) => this.waiting.set(id, resolve));
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { ...this.capabilities, ...(declareTasks ? { extensions: { [TASKS]: {} } } : {}) },
      'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1.0.0' },
    };
    return this.transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta } } as JSONRPCMessage).then(() => answered);
  }

  callTool(name: string, args: Record<string, unknown> = {}): Promise<RpcAnswer> {
    return this.request('tools/call', { name, arguments: args });
  }

  get(taskId: string): Promise<RpcAnswer> {
    return this.request('tasks/get', { taskId });
  }

  cancel(taskId: string): Promise<RpcAnswer> {
    return this.request('tasks/cancel', { taskId });
  }

  update(taskId: string, inputResponses: Record<string, unknown>): Promise<RpcAnswer> {
    return this.request('tasks/update', { taskId, inputResponses });
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
