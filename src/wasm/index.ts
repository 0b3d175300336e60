/** wasm/: pure functions on module bytes. */
export { checkModule, FORMAT_ONLY_RULES } from './check-module.js';
export type { ModuleCheck, ModuleInfo, ModuleRules } from './check-module.js';
export type { Signature } from './module-types.js';
export { instrumentModule, InstrumentError, MemoryCapError, GROW_FAILED_EXPORT, PAGE_BYTES } from './instrument.js';
export type { InstrumentOptions } from './instrument.js';
export { MODULE_LIMITS, MODULE_LIMIT_INFO, moduleLimitRows, formatLimit } from './module-limits.js';
export type { ModuleLimits, ModuleLimitName, ModuleLimitInfo, ModuleLimitRow, LimitOverrun } from './module-limits.js';
export { ModuleLimitError } from './check-limits.js';
export { parseModule } from './parse-module.js';
export { hasStartSection } from './start-section.js';
export type { ParseResult, ParseOptions, MalformedNote } from './parse-module.js';
export { readHeader } from './header.js';
export type { Header, HeaderKind } from './header.js';
export { ByteReader, DecodeError } from './reader.js';
export * from './problem-codes.js';
export type {
  ParsedModule, FuncType, ValueType, ExternKind, ResizableLimits, Import, Export, TableType, GlobalType,
} from './module-types.js';
