// Packages loaded when first used rather than when the module naming them loads: `lectern serve`
// loads every module of the API before it listens, and cheerio (with undici: 0.22 s), archiver
// (0.10 s), pg (0.05 s), tar-stream and yauzl serve requests, builds or PostgreSQL that may never
// come (docs/design/startup.md, "Packages loaded when first used"). Node 24 requires ES modules
// too, synchronously, so a synchronous caller stays synchronous.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A function returning package `name`, required the first time it is called. */
export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(name) as T;
    return loaded;
  };
}
