// GraphiQL's build (`npm run web:build`, after the dashboard's): graphiql 4 and its styles in
// dist/graphiql, the page as index.html and every other file under assets/ with a content hash in
// its name. src/graphiql.ts serves the page at GET /graphql and the assets at /_/graphiql/assets/,
// cached for good. graphiql's stylesheet inlines its 34 fonts (350 KB of base64); they become files
// of their own, so a browser fetches only those whose unicode-range its text needs. Each text file
// gets its brotli (quality 11) and gzip (level 9) copies here, `<file>.br` and `<file>.gz` beside
// it, so the server sends them as they are and compresses nothing.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** Files worth compressing (fonts and images in woff2, png… are compressed already). */
const TEXT = /\.(?:html|js|mjs|css|svg|json|txt|map|ttf)$/;

/** The stylesheets' inlined fonts as files beside them (in assets/, named by their content's hash). */
function fontsAsFiles(): Plugin {
  return {
    name: 'lectern-fonts-as-files',
    apply: 'build',
    generateBundle(_options, bundle) {
      for (const css of Object.values(bundle)) {
        if (css.type !== 'asset' || !css.fileName.endsWith('.css')) continue;
        css.source = String(css.source).replace(
          /url\((["']?)data:font\/(woff2?|ttf);base64,([A-Za-z0-9+/=]+)\1\)/g,
          (_whole, _quote, ext: string, base64: string) => {
            const ref = this.emitFile({ type: 'asset', name: `font.${ext}`, source: Buffer.from(base64, 'base64') });
            return `url(${path.posix.relative(path.posix.dirname(css.fileName), this.getFileName(ref))})`;
          },
        );
      }
    },
  };
}

/**
 * Writes `<file>.br` and `<file>.gz` beside every text file of the bundle, on libuv's threads.
 * Brotli at quality 11 takes seconds of a core for the main script, so each copy is kept in
 * node_modules/.cache under its content's hash and reused while the content is the same (every
 * `npm start` and `npm test` runs this build; graphiql changes only with its version).
 */
function precompressed(): Plugin {
  const cache = path.resolve(import.meta.dirname, '../../../node_modules/.cache/lectern-graphiql');
  const compress = {
    br: (bytes: Buffer) =>
      brotli(bytes, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        },
      }),
    gz: (bytes: Buffer) => gzip(bytes, { level: zlib.constants.Z_BEST_COMPRESSION }),
  };
  return {
    name: 'lectern-precompressed',
    apply: 'build',
    async writeBundle(options, bundle) {
      const dir = options.dir!;
      await mkdir(cache, { recursive: true });
      const used = new Set<string>();
      await Promise.all(
        Object.keys(bundle)
          .filter((file) => TEXT.test(file))
          .flatMap((file) => {
            const full = path.join(dir, file);
            const bytes = readFile(full);
            return (['br', 'gz'] as const).map(async (ext) => {
              const content = await bytes;
              const cached = path.join(cache, `${createHash('sha256').update(content).digest('hex')}.${ext}`);
              used.add(path.basename(cached));
              const copy = await readFile(cached).catch(() => undefined);
              if (copy) return writeFile(`${full}.${ext}`, copy);
              const made = await compress[ext](content);
              await writeFile(`${full}.${ext}`, made);
              // Kept by a rename, so a build running at the same time reads a whole copy or none; keeping it is optional.
              const temporary = `${cached}.${randomUUID()}`;
              await writeFile(temporary, made)
                .then(() => rename(temporary, cached))
                .catch(() => rm(temporary, { force: true }));
            });
          }),
      );
      // Copies of files no longer built go (not another build's copies being written).
      for (const name of await readdir(cache)) if (/^[0-9a-f]{64}\.(?:br|gz)$/.test(name) && !used.has(name)) await rm(path.join(cache, name), { force: true });
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/_/graphiql/',
  plugins: [react(), fontsAsFiles(), precompressed()],
  logLevel: 'warn',
  build: {
    outDir: path.resolve(import.meta.dirname, '../../../dist/graphiql'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // One script for the IDE, by design (it is cached for good once loaded).
    chunkSizeWarningLimit: 4096,
    rolldownOptions: {
      // Brotli at its best is slow on purpose (precompressed above): no notice that a plugin took seconds.
      checks: { bundlerTimings: false },
      // react-compiler-runtime's "use no memo" directive is meant for the React Compiler, which this build does not run.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE' && /react-compiler-runtime/.test(warning.id ?? '')) return;
        warn(warning);
      },
    },
  },
});
