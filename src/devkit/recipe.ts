/**
 * How one template language turns a package project into `module.wasm`. One recipe per language
 * (`recipes/c.ts`, `recipes/assemblyscript.ts`, `recipes/rust.ts`); `subako init`, `build` and `dev`
 * know nothing of a language except through this shape.
 */
export type TemplateName = 'c' | 'assemblyscript' | 'rust';

/** Where the installed subako keeps what a project builds against (absolute paths). */
export interface SdkPaths {
  /** The subako package's root (the folder holding its package.json). */
  packageRoot: string;
  /** `sdk/<language>` of that root. */
  sdkDir: string;
  /** `templates/<language>` of that root: the files `subako init` copies. */
  templateDir: string;
}

/** One program to run, in order, with its working directory at the project. */
export interface BuildCommand {
  /** An absolute path, or a program name looked up on PATH. */
  program: string;
  args: string[];
  /** Extra environment for this command (merged over the caller's). */
  env?: Record<string, string>;
}

/** A tool the recipe needs that is not on this machine, and how to get it, for one line of advice. */
export interface MissingTool {
  tool: string;
  /** e.g. `apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32` or `npm install --save-dev assemblyscript@^0.28.20 …`. */
  install: string;
}

export interface BuildRecipe {
  template: TemplateName;
  /** True when `dir` holds a project of this language (e.g. a Cargo.toml). Pure on the listing. */
  detect(fileNames: readonly string[]): boolean;
  /** The tools the build of the project at `dir` needs that cannot be found; empty when it can run. */
  missingTools(dir: string, sdk: SdkPaths): MissingTool[];
  /**
   * The commands that build the module into `<dir>/<output>` (`output` a file name; the package's `module.wasm`
   * when absent: the build itself names a file of its own and then renames it, build.ts).
   */
  commands(dir: string, sdk: SdkPaths, output?: string): BuildCommand[];
  /** Paths under the project, relative, whose change means a rebuild (`subako dev` watches them). */
  sourceGlobs: readonly string[];
}
