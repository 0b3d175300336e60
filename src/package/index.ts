/** package/: manifests, package directories, the upload checks, bundles (read, write, pack); the content store lives beside these. */
export {
  MANIFEST_FILE, MANIFEST_PROBLEMS, MAX_MANIFEST_BYTES, NAME_PATTERN, VERSION_PATTERN, MAX_DESCRIPTION_LENGTH,
  MAX_VERSION_LENGTH, parseManifest, validateManifest,
} from './manifest.js';
export type { PackageManifest, ManifestResult } from './manifest.js';
export {
  ASSETS_DIR, MODULE_FILE, MAX_MODULE_BYTES, PACKAGE_ENTRIES, PACKAGE_PROBLEMS, readPackageDir, readFileCapped,
} from './package-dir.js';
export type { PackageDirRead, FileRead } from './package-dir.js';
export { FUNCTION_MODULE_RULES, WASI_COMMAND_RULES, checkFunctionModule } from './module-rules.js';
export { checkPackage } from './check-package.js';
export type { PackageCheck } from './check-package.js';
export { BUNDLE_PROBLEMS, BundleError, DEFAULT_BUNDLE_LIMITS, bundleDigest } from './bundle.js';
export type { BundleContents, BundleFile, BundleLimits } from './bundle.js';
export { normalizeEntryPath, readBundle } from './bundle-read.js';
export { unpackBundle, writeBundleTree } from './bundle-write.js';
export { packBundle, type PackOptions } from './bundle-pack.js';
export { ContentStore, type SweepReport } from './store.js';
export { BLOB_ERRORS, BlobError, DirectoryBlobStore, type BlobErrorCode, type BlobStore, type BlobSweep } from './blob-store.js';
export { NatsBlobStore } from './nats-blob-store.js';
