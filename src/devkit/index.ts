export type { BuildRecipe, BuildCommand, MissingTool, SdkPaths, TemplateName } from './recipe.js';
