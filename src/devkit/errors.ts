/** The devkit's refusals: one class, stable codes, messages that say what to do. */
import { SubakoError } from '../errors.js';

export const DEVKIT_ERRORS = {
  /** `subako init` into a directory that already holds files. */
  notEmpty: 'devkit.not_empty',
  /** A template name subako does not have, or an installed subako without its templates/. */
  template: 'devkit.template',
  /** A project whose language no recipe recognises. */
  noRecipe: 'devkit.no_recipe',
  /** A program the build needs is not installed. */
  toolchain: 'devkit.toolchain',
  /** A build command exited non-zero (its output was already shown as it wrote it). */
  buildFailed: 'devkit.build_failed',
} as const;

export type DevkitErrorCode = (typeof DEVKIT_ERRORS)[keyof typeof DEVKIT_ERRORS];

export class DevkitError extends SubakoError {
  declare readonly code: DevkitErrorCode;

  constructor(code: DevkitErrorCode, message: string) {
    super(code, message);
  }
}
