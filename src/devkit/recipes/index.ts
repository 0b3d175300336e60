/** devkit/recipes/: how each template language's project is built into a package (one recipe per language). */
export { assemblyScriptRecipe } from './assemblyscript.js';
export { cRecipe } from './c.js';
export { rustRecipe } from './rust.js';
