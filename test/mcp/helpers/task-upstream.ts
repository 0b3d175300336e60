/**
 * A remote MCP server that keeps tasks of its own (the io.modelcontextprotocol/tasks extension), on the official v2
 * server SDK over loopback HTTP: its tool `job` answers a call that declared the extension with a task at once
 * (`resultType: "task"`), and a call that did not with its result. The test ends a task when it likes
 * (`complete`, `fail`), or has it ask for input (`askInput`); what reached the server — the calls, whether each
 * declared tasks, and every tasks/get, tasks/update and tasks/cancel — is kept for the test to check.
 *
 * The tasks/ methods are the SDK's request handlers as subako's endpoints register them (mcp/task-handlers.ts: the
 * SDK's Server, with the one hook that lets `tools/call` answer a task), so a request that does not declare the
 * extension is refused -32021, as a conforming server refuses it.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { TaskResultServer, registerTaskMethods, requestDeclaresTasks } from '../../../src/mcp/task-handlers.js';
import { TaskNotFoundError, createTaskResult, type DetailedTaskView, type TaskHost } from '../../../src/mcp/task-protocol.js';

export interface TaskUpstream {
  url: string;
  /** Each tools/call's label and whether it declared the extension. */
  calls: { label: string; declaredTasks: boolean }[];
  /** Every tasks/ request, in order: `get <id>`, `update <id> <json>`, `cancel <id>`. */
  requests: string[];
  /** The server's task id for a call's label. */
  taskOf(label: string): string;
  complete(label: string, text: string): void;
  fail(label: string, message: string): void;
  askInput(label: string): void;
  status(label: string): string;
  stop(): Promise<void>;
}

export async function startTaskUpstream(options: { pollIntervalMs?: number } = {}): Promise<TaskUpstream> {
  const tasks = new Map<string, DetailedTaskView>();
  const byLabel = new Map<string, string>();
  const calls: TaskUpstream['calls'] = [];
  const requests: string[] = [];
  let next = 1;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const find = (taskId: string): DetailedTaskView => {
    const task = tasks.get(taskId);
    if (task === undefined) throw new TaskNotFoundError();
    return task;
  };
  const touch = (task: DetailedTaskView, change: Partial<DetailedTaskView>) => Object.assign(task, change, { lastUpdatedAt: new Date().toISOString() });
  const host: TaskHost = {
    run: async () => { throw new Error('not used: tools/call answers tasks itself'); },
    get: async (taskId) => { requests.push(`get ${taskId}`); return { ...find(taskId) }; },
    update: async (taskId, responses) => {
      requests.push(`update ${taskId} ${JSON.stringify(responses)}`);
      const task = find(taskId);
      if (task.status === 'input_required') {
        delete task.inputRequests;
        touch(task, { status: 'working' });
      }
    },
    cancel: async (taskId) => {
      requests.push(`cancel ${taskId}`);
      const task = find(taskId);
      if (task.status === 'working' || task.status === 'input_required') touch(task, { status: 'cancelled', statusMessage: 'cancelled by its client' });
    },
  };
  const factory = () => {
    const server = new TaskResultServer({ name: 'jobs', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({
      tools: [{ name: 'job', description: 'A long job: a task when the client takes tasks.', inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] } }],
    }) as never);
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const label = String((request.params.arguments as { label?: unknown } | undefined)?.label ?? '');
      const declaredTasks = requestDeclaresTasks(ctx as never);
      calls.push({ label, declaredTasks });
      if (!declaredTasks) return { content: [{ type: 'text', text: `plain ${label}` }] } as never;
      const now = new Date().toISOString();
      const task: DetailedTaskView = { taskId: `up-${next++}-${label}`, status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 600_000, pollIntervalMs };
      tasks.set(task.taskId, task);
      byLabel.set(label, task.taskId);
      return createTaskResult(task) as never;
    });
    registerTaskMethods(server, host, () => undefined);
    return server;
  };
  const node = toNodeHandler(createMcpHandler(factory));
  const http: HttpServer = createServer((req, res) => { void node(req, res); });
  http.keepAliveTimeout = 10 * 60_000;
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  const taskOf = (label: string) => {
    const id = byLabel.get(label);
    if (id === undefined) throw new Error(`no task for ${label}`);
    return id;
  };
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls, requests, taskOf,
    complete: (label, text) => { touch(tasks.get(taskOf(label))!, { status: 'completed', result: { content: [{ type: 'text', text }] } }); },
    fail: (label, message) => { touch(tasks.get(taskOf(label))!, { status: 'failed', error: { code: -32603, message } }); },
    askInput: (label) => {
      touch(tasks.get(taskOf(label))!, {
        status: 'input_required',
        inputRequests: { confirm: { method: 'elicitation/create', params: { mode: 'form', message: `Go on with ${label}?`, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } } } },
      });
    },
    status: (label) => tasks.get(taskOf(label))!.status,
    stop: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
