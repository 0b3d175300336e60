/**
 * The recipes subako knows, one per template language, and how a project's language is recognised.
 * Order matters for detection: a Rust or AssemblyScript project may also hold a stray `.c` file, so the
 * more specific recipes are asked first.
 */
import { DevkitError, DEVKIT_ERRORS } from './errors.js';
import type { BuildRecipe, TemplateName } from './recipe.js';
import { assemblyScriptRecipe, cRecipe, rustRecipe } from './recipes/index.js';

const RECIPES: readonly BuildRecipe[] = [rustRecipe, assemblyScriptRecipe, cRecipe];

export const TEMPLATE_NAMES: readonly TemplateName[] = ['c', 'assemblyscript', 'rust'];

export const DEFAULT_TEMPLATE: TemplateName = 'c';

export function isTemplateName(value: string): value is TemplateName {
  return (TEMPLATE_NAMES as readonly string[]).includes(value);
}

export function recipeFor(template: TemplateName): BuildRecipe {
  const recipe = RECIPES.find((r) => r.template === template);
  if (!recipe) throw new DevkitError(DEVKIT_ERRORS.template, `this subako has no build recipe for ${template} yet`);
  return recipe;
}

/** The recipe for a project, from its file listing (`listProject`); throws when none recognises it. */
export function detectRecipe(fileNames: readonly string[], dir: string): BuildRecipe {
  const recipe = RECIPES.find((r) => r.detect(fileNames));
  if (!recipe) {
    throw new DevkitError(
      DEVKIT_ERRORS.noRecipe,
      `${dir} is not a package project subako can build (no Cargo.toml, assembly/index.ts or .c sources); start one with subako init <dir> [--template ${TEMPLATE_NAMES.join('|')}]`,
    );
  }
  return recipe;
}
