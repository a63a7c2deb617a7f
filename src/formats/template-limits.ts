/**
 * The bounds of a webhook's template. The source is checked where it is accepted (API, resource) and
 * again where it runs, on a thread of its own; the render is bounded by liquidjs's own time and memory
 * limits, by a deadline that ends its thread, and its output is measured before anything is sent. A template is a project's untrusted input: none of these bounds
 * can be raised by it.
 */
export const templateLimits = {
  /**
   * Characters of template source: the same bound for the API and the Webhook resource, small enough
   * that a template fits in one API request (64 KiB, JSON-escaped) with room to spare.
   */
  sourceChars: 32 * 1024,
  /** Levels of nested block tags (`if`, `for`, `case`, `capture` …). */
  nestingDepth: 32,
  /**
   * liquidjs `renderLimit`: the time one render may take, in milliseconds, checked between the
   * template's pieces; a real template renders in well under a millisecond.
   */
  renderMs: 250,
  /**
   * The hard bound: a render on a template thread (with its parse, unless cached, and liquidjs's second
   * try) is stopped by ending its thread, whatever piece it is in (template-pool.ts), once it has used
   * `cpuMs` of processor time, or `wallMs` passed however little of it it computed (a busy machine).
   * Above twice `renderMs`, so that liquidjs's own limit, which names the line, is met first wherever
   * it can be.
   */
  stop: { cpuMs: 750, wallMs: 1_500 },
  /**
   * The same for a parse alone (a template checked where it is accepted): bounded by the source's size
   * (a unique 32 KB source parses in a few hundred milliseconds on a busy machine), so this bound only
   * catches what that does not foresee.
   */
  parseStop: { cpuMs: 2_000, wallMs: 5_000 },
  /** A template stopped by `stop` is not run again for this long: it fails at once meanwhile. */
  stoppedMemoryMs: 60_000,
  /** liquidjs `memoryLimit`: what the memory-sensitive filters and ranges may allocate, in its units. */
  memory: 4_000_000,
  /** Bytes (UTF-8) of rendered output. */
  outputBytes: 256 * 1024,
} as const;
