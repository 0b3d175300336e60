// The package's entry for a project that depends on it by `file:` (node_modules/subako-as/index.ts).
export * from "./subako-as/index";
