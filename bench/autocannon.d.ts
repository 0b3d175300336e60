/** The part of autocannon's API the load generator uses (the package ships no types, and @types/autocannon is not installed). */
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    headers?: Record<string, string>;
    body?: string;
    expectBody?: string;
  }
  interface Result {
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    latency: { p50: number; average: number; p99: number };
    requests: { average: number; total: number };
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
