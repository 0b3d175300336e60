/**
 * A catalog's requests on an SDK server: `resources/list`, `resources/templates/list`, `resources/read`,
 * `prompts/list`, `prompts/get` and `completion/complete`, each registered only when the catalog declares what
 * it answers (so a server without resources answers `resources/list` as an unknown method, as MCP says).
 *
 * A prompt or resource may ask its client for input as a tool does (`ctx.input`, ToolInputRequiredError:
 * request-input.ts); its answer is then `input_required`.
 *
 * How a catalog's failures are answered: a resource no one has is the SDK's ResourceNotFoundError (-32602 with
 * the URI), an unknown prompt or reference, a bad cursor and a missing prompt argument are invalid params, an
 * upstream server's JSON-RPC refusal keeps its meaning (invalid params stays invalid params), and anything else
 * is an internal error whose message is ours (a subako error's) or a generic one, reported either way.
 */
import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type Server } from '@modelcontextprotocol/server';
import { SubakoError } from '../errors.js';
import { CatalogCursorError, CatalogNotFoundError, type Catalog, type CatalogRequestContext, type CompletionRequest } from './catalog.js';
import { PromptArgumentError } from './define-catalog.js';
import { ClientCapabilityRequiredError, ToolInputRequiredError } from './input-requests.js';
import { callerInput, inputRequiredAnswer, type InputCarryingRequest } from './request-input.js';
import { RequestStateRefusedError, type RequestStateSeal, type StatefulRequest } from './request-state-seal.js';
import { McpServerError } from './errors.js';
import { traceparentOf } from './trace-context.js';

interface HandlerContext {
  mcpReq: { signal: AbortSignal; _meta?: unknown } & Partial<InputCarryingRequest>;
}

function requestContext(ctx: HandlerContext, params: { _meta?: unknown } | undefined): CatalogRequestContext {
  const traceparent = traceparentOf(ctx.mcpReq._meta) ?? traceparentOf(params?._meta);
  return { signal: ctx.mcpReq.signal, ...(traceparent !== undefined ? { traceparent } : {}) };
}

/** The context of a request that may ask its client for input (`prompts/get`, `resources/read`): `input` beside the rest. */
function askingContext(ctx: HandlerContext, params: { _meta?: unknown } | undefined, asked: StatefulRequest, seal: RequestStateSeal | undefined): CatalogRequestContext {
  const { mcpReq } = ctx;
  const input = typeof mcpReq.requestState === 'function' ? callerInput(mcpReq as InputCarryingRequest, asked, seal) : {};
  return { ...requestContext(ctx, params), ...input };
}

/** A catalog failure as the JSON-RPC error the client reads. */
export function catalogFailure(err: unknown, report: (error: Error) => void): Error {
  if (err instanceof ProtocolError) return err;
  if (err instanceof CatalogNotFoundError) {
    return err.what === 'resource' ? new ResourceNotFoundError(err.key, err.message) : new ProtocolError(ProtocolErrorCode.InvalidParams, err.message);
  }
  if (err instanceof CatalogCursorError || err instanceof PromptArgumentError) return new ProtocolError(ProtocolErrorCode.InvalidParams, err.message);
  // A retry's state that a relaying catalog (a session's) refused: as a served toolbox's own refusal reads.
  if (err instanceof RequestStateRefusedError) return new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid requestState: ${err.message}`, { reason: 'invalid_request_state' });
  report(err instanceof Error ? err : new Error(String(err)));
  if (err instanceof McpServerError && err.reason === 'rejected' && (err.rpcCode === ProtocolErrorCode.InvalidParams || err.rpcCode === ProtocolErrorCode.ResourceNotFound)) {
    return new ProtocolError(ProtocolErrorCode.InvalidParams, err.message);
  }
  if (err instanceof SubakoError) return new ProtocolError(ProtocolErrorCode.InternalError, err.message);
  return new ProtocolError(ProtocolErrorCode.InternalError, 'the request failed on the server (it is logged there)');
}

/** The capabilities a catalog adds to a server's. */
export function catalogCapabilities(catalog: Catalog): Record<string, object> {
  const { resources, prompts, completions } = catalog.capabilities;
  return { ...(resources ? { resources: {} } : {}), ...(prompts ? { prompts: {} } : {}), ...(completions ? { completions: {} } : {}) };
}

export function registerCatalog(server: Server, catalog: Catalog, report: (error: Error) => void, seal?: RequestStateSeal): void {
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      throw catalogFailure(err, report);
    }
  };
  // A prompt or a resource that asks its client for input is answered input_required, its state sealed for the request.
  const asking = async <T>(asked: StatefulRequest, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof ToolInputRequiredError) return inputRequiredAnswer(err, asked, seal) as T;
      // Input of a kind the client did not declare (a relayed upstream's question): -32021, as the revision requires.
      if (err instanceof ClientCapabilityRequiredError) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: err.requiredCapabilities as never }, err.message);
      throw catalogFailure(err, report);
    }
  };
  const { resources, prompts, completions } = catalog.capabilities;
  if (resources) {
    server.setRequestHandler('resources/list', (request, ctx) =>
      guard(() => catalog.listResources(request.params?.cursor, requestContext(ctx, request.params))) as never);
    server.setRequestHandler('resources/templates/list', (request, ctx) =>
      guard(() => catalog.listResourceTemplates(request.params?.cursor, requestContext(ctx, request.params))) as never);
    server.setRequestHandler('resources/read', (request, ctx) => {
      const asked = { method: 'resources/read' as const, name: request.params.uri, args: {} };
      return asking(asked, async () => catalog.readResource(request.params.uri, askingContext(ctx, request.params, asked, seal))) as never;
    });
  }
  if (prompts) {
    server.setRequestHandler('prompts/list', (request, ctx) =>
      guard(() => catalog.listPrompts(request.params?.cursor, requestContext(ctx, request.params))) as never);
    server.setRequestHandler('prompts/get', (request, ctx) => {
      const args = (request.params.arguments ?? {}) as Record<string, string>;
      const asked = { method: 'prompts/get' as const, name: request.params.name, args };
      return asking(asked, async () => catalog.getPrompt(request.params.name, args, askingContext(ctx, request.params, asked, seal))) as never;
    });
  }
  if (completions) {
    server.setRequestHandler('completion/complete', (request, ctx) => guard(() => {
      const { ref, argument, context } = request.params as unknown as CompletionRequest;
      return catalog.complete({ ref, argument, ...(context ? { context } : {}) }, requestContext(ctx, request.params));
    }) as never);
  }
}
