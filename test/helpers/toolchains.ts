/**
 * Tests that build real guests need the template's toolchain (clang, asc, cargo): without it they skip,
 * saying what is missing and the one line that installs it, as `subako build` would.
 */
import { join } from 'node:path';
import { missingToolsMessage } from '../../src/devkit/index.js';
import type { BuildRecipe, SdkPaths } from '../../src/devkit/recipe.js';
import { REPO_ROOT } from './paths.js';

/** This checkout's SDK and template for a language, as `subako build` run from it uses them. */
export const checkoutSdk = (template: BuildRecipe['template']): SdkPaths => ({
  packageRoot: REPO_ROOT,
  sdkDir: join(REPO_ROOT, 'sdk', template),
  templateDir: join(REPO_ROOT, 'templates', template),
});

/** The reason to skip a test that builds with `recipe` here, or false when it can run. */
export function toolchainMissing(recipe: BuildRecipe, sdk: SdkPaths = checkoutSdk(recipe.template)): string | false {
  const missing = recipe.missingTools(sdk.templateDir, sdk);
  return missing.length === 0 ? false : `this machine lacks what it needs: ${missingToolsMessage(recipe.template, missing)}`;
}
