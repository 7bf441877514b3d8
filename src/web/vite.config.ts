// The dashboard's build: a single-page app in dist/web, served by Lectern at / (src/dashboard.ts).
import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: path.resolve(import.meta.dirname, '../../dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
  },
});
