/** Compiles WAT text to a module with the npm `wabt` package, at test time. */
import wabtInit from 'wabt';

type Wabt = Awaited<ReturnType<typeof wabtInit>>;
let wabtPromise: Promise<Wabt> | undefined;

/** Every feature wabt knows, so negative fixtures can use what the checker must refuse. */
const ALL_FEATURES = {
  exceptions: true, mutable_globals: true, sat_float_to_int: true, sign_extension: true, simd: true,
  threads: true, function_references: true, multi_value: true, tail_call: true, bulk_memory: true,
  reference_types: true, annotations: true, code_metadata: true, gc: true, memory64: true,
  extended_const: true, relaxed_simd: true, multi_memory: true,
};

export async function wat(text: string, name = 'fixture.wat'): Promise<Uint8Array<ArrayBuffer>> {
  wabtPromise ??= wabtInit();
  const wabt = await wabtPromise;
  const parsed = wabt.parseWat(name, text, ALL_FEATURES);
  try {
    parsed.resolveNames();
    return new Uint8Array(parsed.toBinary({ write_debug_names: false }).buffer);
  } finally {
    parsed.destroy();
  }
}
