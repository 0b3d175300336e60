/**
 * Discovery, as on upload: run the module with only /package mounted (when it has assets), no volume, no
 * network, 10 seconds in all; ask `server/discover`, then `tools/list` page by page (up to 16), then close
 * stdin and expect exit 0. Every broken rule comes back as a problem; a crash is one too (`discovery.crash`).
 */
import type { Problem } from '../errors.js';
import type { CallLimits } from '../config.js';
import { tailText, type ModuleHandle, type Sandbox } from '../sandbox/index.js';
import { buildRequest } from './protocol.js';
import { ConversationCrashed, GuestConversation } from './conversation.js';
import { checkDiscoverResult, checkTools, readToolsPage, TOOL_RULES } from './tool-rules.js';
import { packagePreopens } from './preopens.js';
import type { DiscoveryResult, PackageSource } from './types.js';

export async function discoverTools(
  sandbox: Sandbox,
  module: ModuleHandle,
  source: PackageSource,
  limits: CallLimits,
): Promise<DiscoveryResult> {
  const started = performance.now();
  const done = (problems: Problem[], tools: DiscoveryResult['tools']): DiscoveryResult => ({
    ok: problems.length === 0,
    problems,
    tools: problems.length === 0 ? tools : null,
    durationMs: performance.now() - started,
  });

  const conversation = new GuestConversation(limits.exitGraceMs);
  const first = buildRequest('discover', 'server/discover');
  const handle = sandbox.run(module, {
    args: [source.name],
    env: [],
    preopens: packagePreopens(source),
    limits: { ...limits, timeoutMs: limits.discoveryTimeoutMs },
    stdin: Buffer.from(first.line),
    onStdout: conversation.onStdout,
  });

  const problems: Problem[] = [];
  const collected: unknown[] = [];
  try {
    problems.push(...checkDiscoverResult(await conversation.attach(handle, first)));
    let cursor: string | null = null;
    for (let page = 1; problems.length === 0; page += 1) {
      if (page > TOOL_RULES.maxPages) {
        problems.push({ code: 'discovery.pages', message: `tools/list asked for a page past the 16th (nextCursor on page 16); answer every tool within 16 pages` });
        break;
      }
      const request = buildRequest('tools-list', 'tools/list', cursor === null ? {} : { cursor });
      const read = readToolsPage(await conversation.request(request), page);
      if ('code' in read) {
        problems.push(read);
        break;
      }
      collected.push(...read.tools);
      if (read.nextCursor === null) break;
      cursor = read.nextCursor;
    }
  } catch (err) {
    if (!(err instanceof ConversationCrashed)) throw err;
  }
  const end = await conversation.finish();
  if (end.crash) {
    const stderr = tailText(end.run.stderrTail);
    const tail = stderr ? ` Its stderr ended with: ${stderr.slice(-500)}` : '';
    return done([{ code: `discovery.crash.${end.crash.reason}`, message: `discovery crashed (${end.crash.reason}): ${end.crash.message}.${tail}` }], null);
  }
  if (problems.length > 0) return done(problems, null);
  const checked = checkTools(collected);
  return done(checked.problems, checked.tools);
}
