/** package/: manifests, package directories, the upload checks (bundles and the store live beside these). */
export {
  MANIFEST_FILE, MANIFEST_PROBLEMS, MAX_MANIFEST_BYTES, NAME_PATTERN, VERSION_PATTERN, MAX_DESCRIPTION_LENGTH,
  MAX_VERSION_LENGTH, parseManifest, validateManifest,
} from './manifest.js';
export type { PackageManifest, ManifestResult } from './manifest.js';
export {
  ASSETS_DIR, MODULE_FILE, MAX_MODULE_BYTES, PACKAGE_PROBLEMS, readPackageDir, readFileCapped,
} from './package-dir.js';
export type { PackageDirRead, FileRead } from './package-dir.js';
export { FUNCTION_MODULE_RULES, WASI_COMMAND_RULES, checkFunctionModule } from './module-rules.js';
export { checkPackage } from './check-package.js';
export type { PackageCheck } from './check-package.js';
export {
  BundleError, BUNDLE_PROBLEMS, DEFAULT_BUNDLE_LIMITS, bundleDigest, readBundle, unpackBundle, writeBundleTree, packBundle,
  type BundleLimits, type BundleFile, type BundleContents,
} from './bundle.js';
export { ContentStore, type SweepReport } from './store.js';
