/**
 * devkit/: writing function packages — the installed SDKs and templates, the build recipes, `init`,
 * `build`, `dev`, and the package bundle that `pack` and `push` share; plus the one check-then-discover
 * step every command that takes a package uses.
 */
export type { BuildRecipe, BuildCommand, MissingTool, SdkPaths, TemplateName } from './recipe.js';
export { DevkitError, DEVKIT_ERRORS, type DevkitErrorCode } from './errors.js';
export { subakoPackageRoot, sdkPaths } from './sdk-paths.js';
export { TEMPLATE_NAMES, DEFAULT_TEMPLATE, isTemplateName, recipeFor, detectRecipe } from './registry.js';
export { fillPlaceholders, projectPath, type TemplateValues } from './placeholders.js';
export { listProject, globToRegExp, sourceMatcher, IGNORED_DIRS } from './project-files.js';
export { initProject, packageNameFor, DEFAULT_DESCRIPTION, type InitOptions, type InitResult } from './init.js';
export { inspectPackage, nameFromFile, type PackageInspection } from './inspect.js';
export { buildProject, projectRecipe, runRecipe, missingToolsMessage, type BuildOptions, type BuildResult } from './build.js';
export { packPackage, bundleFileName, isSkillDir, type PackedPackage } from './pack.js';
export { DevServer, debounced, DEFAULT_DEBOUNCE_MS, type DevServerOptions, type ReloadOutcome } from './dev.js';
