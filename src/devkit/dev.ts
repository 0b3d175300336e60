/**
 * `subako dev`: one package project served over MCP while its author edits it. The URL is minted once and
 * never changes; behind it sits the toolbox of the last good build. A change to a source file (the recipe's
 * `sourceGlobs`) rebuilds, re-checks and swaps that toolbox, so the next call runs the new code; a build or
 * check that fails is reported and the last good toolbox keeps answering.
 *
 * Why a served toolbox and not the platform: a platform session pins its agent's version, and a new
 * package version means a new agent version and a new session — a new URL. Here the capability route is
 * ours, so one URL can front a module that changes. The calls get what a session's would: a volume of
 * their own (`/volume/tmp` and `/volume/data`, kept across reloads) and the egress the author allowed.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Toolbox } from '../tool.js';
import type { ToolboxHandler } from '../mcp/index.js';
import { FunctionHost, type EgressGrant, type FunctionCallContext } from '../function/index.js';
import { MANIFEST_FILE } from '../package/index.js';
import { SUBAKO_VERSION } from '../version.js';
import { buildProject, projectRecipe } from './build.js';
import { DevkitError } from './errors.js';
import { sourceMatcher, watchProject } from './project-files.js';
import type { BuildRecipe, SdkPaths } from './recipe.js';

export interface DevServerOptions {
  dir: string;
  /** Host directory behind /volume (its tmp/ and data/); kept across reloads. */
  volumeDir: string;
  port?: number;
  host?: string;
  egress?: EgressGrant;
  /** Lines for the person at the terminal. */
  log: (line: string) => void;
  /** Where build output goes; default: this process's stderr, as the compiler wrote it. */
  onOutput?: (chunk: Buffer) => void;
  /** Quiet time after the last change before a rebuild starts (editors write a file in several steps). */
  debounceMs?: number;
  sdk?: (recipe: BuildRecipe) => SdkPaths;
  /** Told after every build: whether it now serves the new code. */
  onReload?: (outcome: ReloadOutcome) => void;
}

export type ReloadOutcome = { ok: true; tools: string[] } | { ok: false; reason: string };

export const DEFAULT_DEBOUNCE_MS = 150;
/** How long a replaced toolbox keeps answering the calls it already had (a call's default deadline). */
const RETIRE_AFTER_MS = 30_000;

/** Runs `task` after `ms` of quiet; a change during a run runs it once more afterwards, never two at once. */
export function debounced(ms: number, task: () => Promise<void>): { poke(): void; idle(): Promise<void>; stop(): void } {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const start = (): void => {
    timer = null;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = task().finally(() => {
      running = null;
      if (again && !stopped) {
        again = false;
        start();
      }
    });
  };
  return {
    poke() {
      if (stopped) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(start, ms);
    },
    async idle() {
      while (running || timer) await (running ?? new Promise((r) => setTimeout(r, ms)));
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

/**
 * What dev keeps of the HTTP server mcp/'s `listenRouter` started: the way to stop it. devkit/ knows no HTTP
 * of its own (the rule `http-only-where-http-lives` in .dependency-cruiser.cjs); mcp/ serves.
 */
interface Listener {
  close(done: () => void): unknown;
  closeAllConnections(): void;
}

export class DevServer {
  readonly url: string;
  private current: ToolboxHandler;
  private readonly retired = new Set<ToolboxHandler>();
  private watcher: { close(): void } | null = null;
  private rebuild: ReturnType<typeof debounced> | null = null;

  private constructor(
    private readonly options: DevServerOptions,
    private readonly dir: string,
    private readonly host: FunctionHost,
    private readonly http: Listener,
    url: string,
    first: ToolboxHandler,
    private readonly makeHandler: (toolbox: Toolbox, name: string) => ToolboxHandler,
  ) {
    this.url = url;
    this.current = first;
  }

  static async start(options: DevServerOptions): Promise<DevServer> {
    const dir = resolve(options.dir);
    const recipe = await projectRecipe(dir); // refuses a directory that is no project before anything starts
    // Loaded here, not at the top: `subako check` and `call` import devkit/ and need none of the MCP server.
    const { CapabilityRouter, createToolboxHandler, listenRouter } = await import('../mcp/index.js');
    const makeHandler = (toolbox: Toolbox, name: string): ToolboxHandler =>
      createToolboxHandler(toolbox, { serverInfo: { name: `subako dev: ${name}`, version: SUBAKO_VERSION } });
    const router = new CapabilityRouter();
    const { server: http, baseUrl } = await listenRouter(router, options.host ?? '127.0.0.1', options.port ?? 0);
    // Two workers: a call can run while the next build's discovery does.
    const host = new FunctionHost({ poolSize: 2 });
    const empty = makeHandler({}, 'no build yet');
    let server: DevServer | undefined;
    // One capability for the server's whole life; what answers behind it is whatever `current` is now.
    const capability = router.mint(Object.assign((request: Request) => server!.current(request), {
      handleNode: (req: Parameters<ToolboxHandler['handleNode']>[0], res: Parameters<ToolboxHandler['handleNode']>[1]) => server!.current.handleNode(req, res),
    }));
    const url = `${baseUrl}${capability.path}`;
    server = new DevServer(options, dir, host, http, url, empty, makeHandler);
    mkdirSync(join(options.volumeDir, 'tmp'), { recursive: true });
    mkdirSync(join(options.volumeDir, 'data'), { recursive: true });
    try {
      await server.reload();
      server.watch(recipe);
    } catch (error) {
      await server.close(); // nothing left listening or running behind a start that failed
      throw error;
    }
    return server;
  }

  /** Builds, checks and, when all is well, swaps the served toolbox. Never throws for the project's faults. */
  async reload(): Promise<ReloadOutcome> {
    const { log } = this.options;
    let outcome: ReloadOutcome;
    try {
      const { inspection } = await buildProject(this.dir, this.host, { onOutput: this.options.onOutput, sdk: this.options.sdk });
      if (inspection.problems.length > 0 || !inspection.loaded || !inspection.discovery?.tools) {
        const lines = inspection.problems.map((p) => `  ${p.code}: ${p.message}`);
        outcome = { ok: false, reason: `refused by the checks:\n${lines.join('\n')}` };
      } else {
        const { loaded, discovery } = inspection;
        const toolbox = this.host.toolbox(loaded, discovery.tools!, () => this.callContext());
        this.swap(this.makeHandler(toolbox, loaded.source.name));
        outcome = { ok: true, tools: discovery.tools!.map((t) => t.name) };
      }
    } catch (error) {
      if (!(error instanceof DevkitError)) throw error;
      outcome = { ok: false, reason: error.message };
    }
    if (outcome.ok) log(`subako dev: built; serving ${outcome.tools.length} tool${outcome.tools.length === 1 ? '' : 's'}: ${outcome.tools.join(', ')}`);
    else log(`subako dev: ${outcome.reason}\nsubako dev: the last good build keeps serving`);
    this.options.onReload?.(outcome);
    return outcome;
  }

  private callContext(): FunctionCallContext {
    return { tmpDir: join(this.options.volumeDir, 'tmp'), dataDir: join(this.options.volumeDir, 'data'), egress: this.options.egress };
  }

  private swap(next: ToolboxHandler): void {
    const previous = this.current;
    this.current = next;
    this.retired.add(previous);
    // Calls already running on the old toolbox finish; then its exchanges are closed.
    setTimeout(() => {
      if (this.retired.delete(previous)) void previous.close();
    }, RETIRE_AFTER_MS).unref();
  }

  private watch(recipe: BuildRecipe): void {
    // The manifest is every package's, whatever its language: a new name or description is a reload too.
    const isSource = sourceMatcher([...recipe.sourceGlobs, MANIFEST_FILE]);
    const rebuild = debounced(this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS, async () => {
      this.options.log('subako dev: a source changed; rebuilding');
      try {
        await this.reload();
      } catch (error) {
        // Not the project's fault (reload reports those): said, and the last good build keeps serving.
        this.options.log(`subako dev: the rebuild failed: ${error instanceof Error ? error.message : String(error)}\nsubako dev: the last good build keeps serving`);
      }
    });
    this.rebuild = rebuild;
    this.watcher = watchProject(this.dir, (path) => {
      if (isSource(path)) rebuild.poke();
    });
  }

  async close(): Promise<void> {
    this.rebuild?.stop();
    this.watcher?.close();
    await this.rebuild?.idle();
    await new Promise<void>((done) => {
      this.http.close(() => done());
      this.http.closeAllConnections();
    });
    await Promise.all([this.current.close(), ...[...this.retired].map((h) => h.close())]);
    this.retired.clear();
    await this.host.close();
  }
}
